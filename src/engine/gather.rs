//! Gathers one run's per-second worker snapshots: merges each second once every running
//! thread has reported it, hands it to the observer, and builds the run's [`Results`].

use std::collections::BTreeMap;
use std::collections::btree_map::Entry;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError};
use mio::Waker;

use crate::engine::observer::{RunObserver, Second};
use crate::engine::progress::{Progress, WorkerProgress};
use crate::engine::worker::WorkerMsg;
use crate::plan::{Pacing, Plan, StopAt};
use crate::results::{
    Capacity, IntervalSummary, Results, Row, ScheduleResult, Unanswered, VisibilityResult,
    build_row, summarize_interval,
};
use crate::signals;
use crate::stats::{ClientSeries, OpStats, RowName, ScheduleStats};

/// How often the runner checks for Ctrl-C while waiting for workers.
const SIGNAL_POLL: Duration = Duration::from_millis(100);

/// Merges worker snapshots second by second and builds the results of one run.
pub struct Gatherer<'a> {
    plan: &'a Plan,
    run_number: u32,
    start_epoch_ms: u64,
    run_start: Instant,
    names: Vec<RowName>,
    /// Snapshots not yet complete for all threads, by second.
    pending: BTreeMap<u32, Vec<OpStats>>,
    /// Per thread: the next second it will report; `None` once its load is over.
    next_second: Vec<Option<u32>>,
    /// Threads not finished yet (after their load, a wait for tracked writes).
    running: usize,
    /// Per thread: its clients with a connection up at the end of its last reported
    /// second (0 once it finished and closed them).
    connected: Vec<u32>,
    /// Seconds already summarized.
    done_seconds: u32,
    totals: Vec<OpStats>,
    /// A pool: each member's `host:port`; its stats rows follow the command rows.
    servers: Vec<String>,
    /// A pool: each member's figures over the run and per second.
    server_totals: Vec<OpStats>,
    server_series: Vec<Vec<IntervalSummary>>,
    /// `--visibility-from`: the lag row's figures over the run and per second.
    visibility: Option<(OpStats, Vec<IntervalSummary>)>,
    /// `--visibility-from`: the lag row's figures of the last second summarized, with
    /// its start and end (epoch ms), and what the waits for tracked writes after the
    /// load settled: [`finish`](Self::finish) adds these to that second.
    last_lag_second: Option<(OpStats, u64, u64)>,
    settled_lag: OpStats,
    /// Connection errors no command is to blame for (the workers' last stats slot):
    /// counted in Totals only.
    unattributed: OpStats,
    /// Open loop: the schedule's health over the whole run.
    health: Option<ScheduleStats>,
    /// Closed loop: what the threads left unanswered.
    unanswered: Unanswered,
    series: Vec<Vec<IntervalSummary>>,
    totals_series: Vec<IntervalSummary>,
    /// When the load ended (the last thread's): the run's time ends there, not after a
    /// wait for tracked writes.
    finish: Option<Instant>,
    interrupted: bool,
    /// The observer gets the merged seconds (not during the verification pass).
    live: bool,
    /// Per-client figures: (thread, client in thread, figures).
    pub client_series: Vec<(usize, usize, ClientSeries)>,
    /// Live progress: every worker's totals, and when the observer hears them next.
    progress: Vec<Arc<WorkerProgress>>,
    next_progress: Option<Instant>,
}

impl<'a> Gatherer<'a> {
    pub fn new(
        plan: &'a Plan,
        run_number: u32,
        names: Vec<RowName>,
        threads: usize,
        start_epoch_ms: u64,
        run_start: Instant,
        live: bool,
    ) -> Self {
        let servers = plan
            .server
            .pool
            .as_ref()
            .map_or_else(Vec::new, |p| p.names());
        Gatherer {
            server_totals: servers.iter().map(|_| OpStats::new()).collect(),
            server_series: vec![Vec::new(); servers.len()],
            visibility: plan
                .server
                .visibility
                .as_ref()
                .map(|_| (OpStats::new(), Vec::new())),
            last_lag_second: None,
            settled_lag: OpStats::new(),
            unattributed: OpStats::new(),
            servers,
            plan,
            run_number,
            start_epoch_ms,
            run_start,
            totals: (0..names.len()).map(|_| OpStats::new()).collect(),
            health: plan.load.pacing.is_open().then(ScheduleStats::new),
            unanswered: Unanswered::default(),
            series: vec![Vec::new(); names.len()],
            names,
            pending: BTreeMap::new(),
            next_second: vec![Some(0); threads],
            running: threads,
            connected: vec![0; threads],
            done_seconds: 0,
            totals_series: Vec::new(),
            finish: None,
            interrupted: false,
            live,
            client_series: Vec::new(),
            progress: Vec::new(),
            next_progress: None,
        }
    }

    /// Tells the observer the workers' totals every `Outputs::progress_every` (a live
    /// run only; nothing when `workers` is empty).
    pub fn watch_progress(&mut self, workers: Vec<Arc<WorkerProgress>>) {
        if let (Some(every), true, false) = (
            self.plan.outputs.progress_every,
            self.live,
            workers.is_empty(),
        ) {
            self.next_progress = Some(self.run_start + every);
            self.progress = workers;
        }
    }

    /// Reports progress if its time has come; returns how long to wait at most before
    /// the next report.
    fn tick_progress(&mut self, observer: &mut dyn RunObserver) -> Duration {
        let (Some(next), Some(every)) = (self.next_progress, self.plan.outputs.progress_every)
        else {
            return SIGNAL_POLL;
        };
        let now = Instant::now();
        if now >= next {
            let elapsed = now.saturating_duration_since(self.run_start);
            observer.progress(&Progress::sum(self.run_number, elapsed, &self.progress));
            // The next tick on the run's own grid, skipping ticks already missed.
            let mut following = next + every;
            while following <= now {
                following += every;
            }
            self.next_progress = Some(following);
        }
        self.next_progress
            .map_or(SIGNAL_POLL, |n| n.saturating_duration_since(now))
            .min(SIGNAL_POLL)
    }

    /// Receives until every worker finished (its load, then its wait for tracked writes);
    /// returns the first failure message.
    pub fn collect(
        &mut self,
        rx: &Receiver<WorkerMsg>,
        stop: &AtomicBool,
        wakers: &[Waker],
        observer: &mut dyn RunObserver,
    ) -> Option<String> {
        let mut first_error = None;
        let stop_all = |stop: &AtomicBool| {
            stop.store(true, Ordering::Relaxed);
            for waker in wakers {
                let _ = waker.wake();
            }
        };
        let mut stop_asked = false;
        while self.running > 0 {
            if signals::received().is_some() && !self.interrupted {
                self.interrupted = true;
                observer.interrupted(self.run_number, self.run_start.elapsed());
                stop_all(stop);
            }
            if !stop_asked && observer.stop_requested() {
                stop_asked = true;
                stop_all(stop);
            }
            let wait = self.tick_progress(observer);
            match rx.recv_timeout(wait) {
                Ok(WorkerMsg::Snapshot {
                    thread,
                    second,
                    stats,
                    health,
                    connected,
                }) => {
                    if let Some(up) = self.connected.get_mut(thread) {
                        *up = connected;
                    }
                    self.merge_snapshot(second, stats);
                    self.merge_health(health.as_ref());
                    if let Some(next) = self.next_second[thread].as_mut() {
                        *next = (*next).max(second + 1);
                    }
                    self.summarize_ready(false, observer);
                }
                Ok(WorkerMsg::ClientSeries { thread, series }) => {
                    self.client_series
                        .extend(series.into_iter().map(|(client, s)| (thread, client, s)));
                }
                Ok(WorkerMsg::Failed { message, .. }) => {
                    if first_error.is_none() {
                        first_error = Some(message);
                        stop_all(stop);
                    }
                }
                Ok(WorkerMsg::LoadDone {
                    thread,
                    at,
                    second,
                    stats,
                    health,
                    unanswered,
                }) => {
                    self.merge_snapshot(second, stats);
                    self.merge_health(health.as_ref());
                    self.unanswered.merge(&unanswered);
                    self.next_second[thread] = None;
                    if let Some(up) = self.connected.get_mut(thread) {
                        *up = 0;
                    }
                    self.finish = Some(self.finish.map_or(at, |f| f.max(at)));
                    self.summarize_ready(false, observer);
                }
                Ok(WorkerMsg::Finished { settled, .. }) => {
                    self.running = self.running.saturating_sub(1);
                    if let Some(lag) = self.lag_slot(&settled) {
                        self.settled_lag.merge(lag);
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        self.summarize_ready(true, observer);
        first_error
    }

    /// Adds one thread's stats of `second` to what is pending for that second. The first
    /// thread's are kept as they came: merging them into fresh stats would allocate and
    /// copy every row's histogram (some 190 KB each) once a second for nothing.
    fn merge_snapshot(&mut self, second: u32, stats: Vec<OpStats>) {
        match self.pending.entry(second) {
            Entry::Vacant(slot) => {
                slot.insert(stats);
            }
            Entry::Occupied(mut slot) => {
                for (into, from) in slot.get_mut().iter_mut().zip(&stats) {
                    into.merge(from);
                }
            }
        }
    }

    /// Adds one thread's schedule health into the run's.
    fn merge_health(&mut self, health: Option<&ScheduleStats>) {
        if let (Some(total), Some(health)) = (self.health.as_mut(), health) {
            total.merge(health);
        }
    }

    /// Summarizes every second that all running threads have reported.
    fn summarize_ready(&mut self, all: bool, observer: &mut dyn RunObserver) {
        let limit = if all {
            self.pending
                .keys()
                .next_back()
                .map_or(self.done_seconds, |s| s + 1)
        } else {
            match self.next_second.iter().flatten().min() {
                // The last second of a timed run waits for the threads to finish (they
                // do at its end, milliseconds after reporting it), so the observers hear
                // it as the run's end: memtier's last progress line says `0 threads`.
                Some(&limit) => limit.min(self.last_timed_second().unwrap_or(limit)),
                None => self
                    .pending
                    .keys()
                    .next_back()
                    .map_or(self.done_seconds, |s| s + 1),
            }
        };
        while self.done_seconds < limit {
            let second = self.done_seconds;
            let stats = self
                .pending
                .remove(&second)
                .unwrap_or_else(|| self.names.iter().map(|_| OpStats::new()).collect());
            if self.is_empty_tail(second, &stats) {
                // The run ended on a second boundary: the "second" after it has no time
                // and no requests, and is no interval at all.
                self.done_seconds += 1;
                continue;
            }
            self.add_second(second, &stats, observer);
            self.done_seconds += 1;
        }
    }

    /// A `--test-time` run's last second (the one its deadline ends), 0-based.
    fn last_timed_second(&self) -> Option<u32> {
        match self.plan.load.stop {
            StopAt::Time(limit) if !limit.is_zero() => {
                let ms = limit.as_millis().saturating_sub(1) / 1000;
                Some(u32::try_from(ms).unwrap_or(u32::MAX))
            }
            _ => None,
        }
    }

    /// Whether `second` starts at or after the end of a finished run and saw nothing.
    fn is_empty_tail(&self, second: u32, stats: &[OpStats]) -> bool {
        let all_done = self.next_second.iter().all(Option::is_none);
        let ended_by = self
            .finish
            .map(|f| f.saturating_duration_since(self.run_start));
        all_done
            && second > 0
            && stats
                .iter()
                .all(|s| s.count == 0 && s.connection_errors == 0)
            && ended_by.is_some_and(|d| d.as_millis() <= u128::from(second) * 1000 + 1)
    }

    fn add_second(&mut self, second: u32, stats: &[OpStats], observer: &mut dyn RunObserver) {
        let start = self.start_epoch_ms + u64::from(second) * 1000;
        let end = match self.finish {
            Some(finish) if self.next_second.iter().all(Option::is_none) => {
                let finish_ms = self.start_epoch_ms
                    + finish.saturating_duration_since(self.run_start).as_millis() as u64;
                finish_ms.clamp(start, start + 1000)
            }
            _ => start + 1000,
        };
        let percentiles = &self.plan.outputs.percentiles;
        let mut second_total = OpStats::new();
        let (stats, extra) = stats.split_at(self.names.len().min(stats.len()));
        // The last slot (after the pool's and the lag's rows): Totals' alone.
        let extra = match extra.split_last() {
            Some((unattributed, rest)) => {
                self.unattributed.merge(unattributed);
                second_total.merge(unattributed);
                rest
            }
            None => extra,
        };
        let (server_stats, vis_stats) = extra.split_at(self.servers.len().min(extra.len()));
        if let (Some((total, series)), Some(vis)) = (self.visibility.as_mut(), vis_stats.first()) {
            series.push(summarize_interval(vis, start, end, percentiles));
            total.merge(vis);
            self.last_lag_second = Some((vis.clone(), start, end));
        }
        for (server, server_stats) in server_stats.iter().enumerate() {
            if server < self.servers.len() {
                let summary = summarize_interval(server_stats, start, end, percentiles);
                self.server_series[server].push(summary);
                self.server_totals[server].merge(server_stats);
            }
        }
        for (row, row_stats) in stats.iter().enumerate() {
            self.series[row].push(summarize_interval(row_stats, start, end, percentiles));
            self.totals[row].merge(row_stats);
            second_total.merge(row_stats);
        }
        self.totals_series
            .push(summarize_interval(&second_total, start, end, percentiles));
        if self.live {
            self.report_second(second, stats, &second_total, observer);
        }
    }

    /// The lag row's slot of a worker's stats (after the command rows and a pool's; the
    /// last slot is Totals' alone), as [`add_second`](Self::add_second) splits them.
    fn lag_slot<'s>(&self, stats: &'s [OpStats]) -> Option<&'s OpStats> {
        self.visibility.as_ref()?;
        let extra = stats.get(self.names.len()..)?;
        let (_, rest) = extra.split_last()?;
        rest.get(self.servers.len())
    }

    /// Hands the merged second to the observer, with the run so far.
    fn report_second(
        &self,
        second: u32,
        rows: &[OpStats],
        last: &OpStats,
        observer: &mut dyn RunObserver,
    ) {
        let mut so_far = OpStats::new();
        for row in &self.totals {
            so_far.merge(row);
        }
        so_far.merge(&self.unattributed);
        let elapsed = self.run_start.elapsed();
        let percent = match (self.plan.load.stop, self.plan.planned_requests()) {
            (StopAt::Time(limit), _) => {
                elapsed.as_secs_f64() / limit.as_secs_f64().max(1e-9) * 100.0
            }
            (_, Some(n)) => so_far.count as f64 / n.max(1) as f64 * 100.0,
            (_, None) => 0.0,
        };
        observer.second(&Second {
            run: self.run_number,
            index: second,
            elapsed,
            percent: percent.clamp(0.0, 100.0),
            threads_running: self.next_second.iter().filter(|n| n.is_some()).count(),
            connections: self.plan.total_clients(),
            connected: self.connected.iter().map(|&c| c as usize).sum(),
            rows,
            last,
            so_far: &so_far,
        });
    }

    /// Adds what the waits for tracked writes after the load settled to the lag's row:
    /// to its figures over the run and to its last second (writes acknowledged in the
    /// load's last moments, or left waiting by a stalled replica), so that the seconds
    /// still add up to the run and end with the load.
    fn add_settled_lag(&mut self) {
        let settled = std::mem::take(&mut self.settled_lag);
        let Some((total, series)) = self.visibility.as_mut() else {
            return;
        };
        if settled.count == 0 && settled.errors == 0 && settled.misses == 0 {
            return;
        }
        total.merge(&settled);
        if let (Some((mut last, start, end)), Some(summary)) =
            (self.last_lag_second.take(), series.last_mut())
        {
            last.merge(&settled);
            *summary = summarize_interval(&last, start, end, &self.plan.outputs.percentiles);
        }
    }

    /// The run's results: one row per command, then Totals. The title is the front
    /// end's to give.
    pub fn finish(mut self) -> Results {
        self.add_settled_lag();
        let finish = self.finish.unwrap_or_else(Instant::now);
        let duration = finish.saturating_duration_since(self.run_start);
        let mut all = OpStats::new();
        let mut result_rows: Vec<Row> = Vec::with_capacity(self.names.len() + 1);
        let any_hits = self.names.iter().any(|n| n.has_hits);
        for ((name, stats), series) in self.names.into_iter().zip(&self.totals).zip(self.series) {
            all.merge(stats);
            result_rows.push(build_row(name, stats, duration, series));
        }
        all.merge(&self.unattributed);
        // Arbitrary commands have no hits or misses, so neither has their total.
        let totals = RowName::totals(any_hits);
        let totals = build_row(totals, &all, duration, self.totals_series);
        let servers = self
            .servers
            .iter()
            .zip(&self.server_totals)
            .zip(self.server_series)
            .map(|((name, stats), series)| {
                build_row(RowName::new(name, name, false), stats, duration, series)
            })
            .collect();
        let visibility = self.visibility.map(|(stats, series)| {
            let name = RowName::new("Lag", "VISIBILITY", false);
            Box::new(VisibilityResult {
                lag: build_row(name, &stats, duration, series),
                timeouts: stats.errors,
                untracked: stats.misses,
            })
        });
        let plan = self.plan;
        let schedule = match (self.health, plan.load.pacing.rate(), plan.target_rate()) {
            (Some(health), Some(rate), Some(target)) => Some(ScheduleResult::new(
                target,
                rate.arrival.name(),
                matches!(plan.load.pacing, Pacing::PerConnection(_)),
                achieved_per_sec(plan, totals.count, duration, target),
                health,
                totals.service.as_ref().map(|s| &s.histogram),
                Capacity {
                    connections: plan.total_clients() as u64,
                    pipeline: plan.load.pipeline as u64,
                },
            )),
            _ => None,
        };
        result_rows.push(totals);
        Results {
            title: String::new(),
            run_number: self.run_number,
            start_epoch_ms: self.start_epoch_ms,
            finish_epoch_ms: self.start_epoch_ms + duration.as_millis() as u64,
            duration_ms: duration.as_millis() as u64,
            interrupted: self.interrupted,
            stopped_by: None,
            cluster: plan.server.cluster_mode,
            rows: result_rows,
            servers,
            visibility,
            schedule,
            // Open loop counts its own in the schedule's health.
            // The warning names the front end's own rate flag.
            unanswered: (self.unanswered.requests > 0 && !plan.load.pacing.is_open()).then_some(
                Unanswered {
                    rate_flag: plan.names.rate,
                    ..self.unanswered
                },
            ),
        }
    }
}

/// Requests answered per second of an open-loop run's schedule: over the run, or, for a
/// run bounded by a count that answered it all before its schedule's span ended (count
/// / target: a uniform schedule's last request is due a period before that span ends,
/// so the run's own length gave `-n 20` at 100/s 20 / 0.19 s, 105 %), over that span.
/// A count run cut short (Ctrl-C, an error) is measured over the time it ran: over the
/// span it never reached, 2.5 s of 1000/s out of `-n 50000` read as 2.5 %.
fn achieved_per_sec(plan: &Plan, answered: u64, duration: Duration, target: u64) -> f64 {
    let span = plan
        .planned_requests()
        .filter(|&planned| answered >= planned)
        .map_or(0.0, |n| n as f64 / target.max(1) as f64);
    answered as f64 / duration.as_secs_f64().max(span).max(1e-9)
}
