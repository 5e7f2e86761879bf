//! Live sinks: where a run's per-second figures go while it runs (dashboards, scrapers).

pub mod prometheus;
