//! The endpoint fed by a run: a [`RunObserver`] that folds each merged second of the
//! engine into the metrics and keeps the endpoint up for as long as it lives.
//!
//! ```text
//! front end: PrometheusObserver::start(settings, row commands, runs)   binds, prints the address
//! engine (runner thread): run_starting / run_started / second / run_finished
//!     -> SecondSample -> PrometheusMetrics::update (no lock but the pointer swap)
//! front end, after the runs: stop()                                     listener closed, thread joined
//! ```
//!
//! Everything here runs on the runner's thread once a second or at a run's edges, never
//! on a worker's event loop.

use std::time::{Duration, Instant};

use crate::engine::observer::{RunEnd, RunObserver, RunStart, Second};
use crate::error::Error;
use crate::signals;

use super::metrics::{CommandSecond, PrometheusMetrics, RunInfo, SecondSample};
use super::server::PrometheusEndpoint;
use super::settings::PrometheusSettings;

/// The live endpoint as a run observer. Dropping it stops the endpoint too.
#[derive(Debug)]
pub struct PrometheusObserver {
    metrics: PrometheusMetrics,
    endpoint: Option<PrometheusEndpoint>,
    /// The `command` label of each stats row, in the plan's row order (`SET`, `GET`,
    /// `WAIT`, or each arbitrary command row's name).
    commands: Vec<String>,
    run: u32,
    /// `--prometheus-linger`: how long [`stop`](Self::stop) waits for a scrape of the
    /// final figures.
    linger: Duration,
}

impl PrometheusObserver {
    /// Binds the endpoint and starts serving (the address goes to stderr as one line):
    /// before the run, so a port in use fails before any connection to the server and a
    /// scraper can start early. `commands` names the plan's stats rows; `configured_runs`
    /// is `--run-count`.
    pub fn start(
        settings: &PrometheusSettings,
        commands: Vec<String>,
        configured_runs: u32,
    ) -> Result<PrometheusObserver, Error> {
        let metrics = PrometheusMetrics::new(settings, RunInfo::new(configured_runs));
        let endpoint = PrometheusEndpoint::start(settings, metrics.exposition())?;
        Ok(PrometheusObserver {
            metrics,
            endpoint: Some(endpoint),
            commands,
            run: 0,
            linger: settings.linger,
        })
    }

    /// The address the endpoint is bound to.
    pub fn local_addr(&self) -> Option<std::net::SocketAddr> {
        self.endpoint.as_ref().map(PrometheusEndpoint::local_addr)
    }

    /// Closes the listener and every scrape connection and joins the endpoint's thread;
    /// with `--prometheus-linger`, once a scrape has taken the final figures (or the
    /// linger has passed, or a stop signal came), so that a scraper sees the run's end.
    pub fn stop(mut self) {
        if !self.linger.is_zero()
            && let Some(endpoint) = &self.endpoint
        {
            let exposition = self.metrics.exposition();
            let before = exposition.taken();
            eprintln_safe!(
                "Prometheus endpoint http://{}/metrics stays up until a scrape takes the final figures (at most {} s)",
                endpoint.local_addr(),
                self.linger.as_secs_f64()
            );
            let deadline = Instant::now() + self.linger;
            while exposition.taken() == before
                && Instant::now() < deadline
                && signals::received().is_none()
            {
                // Polled: the scrape is served on the endpoint's own thread.
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        if let Some(endpoint) = self.endpoint.take() {
            endpoint.stop();
        }
    }

    /// Publishes the gauges alone (no command moved).
    fn gauges(&mut self, connections: u64, threads: u64) {
        self.metrics.update(&SecondSample {
            commands: &[],
            other_connection_errors: 0,
            connections,
            threads,
            run: self.run,
        });
    }
}

impl RunObserver for PrometheusObserver {
    fn run_starting(&mut self, run: u32) {
        self.run = run;
        self.gauges(0, 0);
    }

    fn run_started(&mut self, start: &RunStart) -> Result<(), String> {
        // The threads are launched; their connections come up during the first second,
        // which reports how many did.
        self.gauges(0, start.threads as u64);
        Ok(())
    }

    fn second(&mut self, second: &Second<'_>) {
        // One short list a second on the runner's thread: the rows are borrowed, no
        // histogram is copied.
        let commands: Vec<CommandSecond<'_>> = second
            .rows
            .iter()
            .zip(&self.commands)
            .map(|(row, command)| CommandSecond {
                command,
                ops: row.count,
                hits: row.hits,
                misses: row.misses,
                errors: row.errors,
                connection_errors: row.connection_errors,
                bytes_sent: row.bytes_tx,
                bytes_received: row.bytes_rx,
                latency_sum_us: row.latency_sum_us,
                latency_us: &row.latency,
            })
            .collect();
        // The second's total counts what no command's row does.
        let on_rows: u64 = second.rows.iter().map(|r| r.connection_errors).sum();
        self.metrics.update(&SecondSample {
            commands: &commands,
            other_connection_errors: second.last.connection_errors.saturating_sub(on_rows),
            connections: second.connected as u64,
            threads: second.threads_running as u64,
            run: second.run,
        });
    }

    fn run_finished(&mut self, _end: &mut RunEnd) -> Result<(), String> {
        self.gauges(0, 0);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::OpStats;
    use std::io::{Read, Write};
    use std::net::TcpStream;
    use std::time::Duration;

    fn settings() -> PrometheusSettings {
        PrometheusSettings::new("127.0.0.1:0".parse().unwrap(), Vec::new(), vec![100, 1_000])
            .unwrap()
    }

    fn scrape(observer: &PrometheusObserver) -> String {
        let mut stream = TcpStream::connect(observer.local_addr().unwrap()).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        stream
            .write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap();
        let mut text = String::new();
        stream.read_to_string(&mut text).unwrap();
        text
    }

    fn stats(count: u64, latency_us: u64) -> OpStats {
        let mut s = OpStats::new();
        for _ in 0..count {
            s.latency.record(latency_us).unwrap();
        }
        s.count = count;
        s.latency_sum_us = count * latency_us;
        s.bytes_tx = count * 10;
        s.bytes_rx = count * 5;
        s
    }

    #[test]
    fn seconds_become_counters_and_gauges_follow_the_run() {
        let mut observer =
            PrometheusObserver::start(&settings(), vec!["SET".into(), "GET".into()], 2).unwrap();
        observer.run_starting(1);
        observer
            .run_started(&RunStart {
                run: 1,
                threads: 2,
                clients_per_thread: 3,
                warmup: Duration::ZERO,
                target_rate: None,
            })
            .unwrap();
        let text = scrape(&observer);
        assert!(text.contains("memtier_connections 0\n"), "{text}");
        assert!(text.contains("memtier_threads 2\n"), "{text}");
        assert!(text.contains("memtier_run 1\n"), "{text}");
        assert!(text.contains("memtier_configured_runs 2\n"), "{text}");

        let rows = [stats(7, 50), stats(0, 0)];
        let all = stats(7, 50);
        for index in 0..2 {
            observer.second(&Second {
                run: 1,
                index,
                elapsed: Duration::from_secs(u64::from(index) + 1),
                percent: 50.0,
                threads_running: 2,
                connections: 6,
                connected: 5 - index as usize,
                rows: &rows,
                last: &all,
                so_far: &all,
            });
        }
        let text = scrape(&observer);
        assert!(
            text.contains("memtier_ops_total{command=\"SET\"} 14\n"),
            "{text}"
        );
        assert!(
            text.contains("memtier_connections 4\n"),
            "the connections up at the last second, not those configured: {text}"
        );
        assert!(
            !text.contains("command=\"GET\""),
            "a command that never ran has no series: {text}"
        );
        assert!(text.contains("memtier_sent_bytes_total 140\n"), "{text}");
        assert!(
            text.contains("memtier_latency_seconds_bucket{command=\"SET\",le=\"0.0001\"} 14\n"),
            "{text}"
        );

        observer.run_finished(&mut RunEnd::default()).unwrap();
        let text = scrape(&observer);
        assert!(text.contains("memtier_threads 0\n"), "{text}");
        assert!(text.contains("memtier_connections 0\n"), "{text}");
        // Counters never go back.
        assert!(
            text.contains("memtier_ops_total{command=\"SET\"} 14\n"),
            "{text}"
        );
        let addr = observer.local_addr().unwrap();
        observer.stop();
        assert!(TcpStream::connect(addr).is_err(), "still listening");
    }
}
