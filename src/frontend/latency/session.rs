//! One `kvbench latency` probe's output side: takes samples and clock ticks from whatever
//! sends the requests, prints each line as soon as it is due (flushed), and writes the
//! `--hdr-file` of every sample at the end. Touches no socket.

use std::io::{ErrorKind, Write};
use std::path::PathBuf;

use super::flags::Options;
use super::render::Style;
use super::window_stats::WindowStats;
use super::windows::Windows;
use crate::error::Error;
use crate::report::hdr::render_percentile_distribution;
use crate::report::write_atomic;

/// Whether the probe goes on after an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Keep sending.
    Continue,
    /// The probe is over (its one window was printed, or it was interrupted): stop sending
    /// and call [`Session::finish`].
    Stop,
    /// Standard output's reader has gone (`| head -3` read its lines): stop sending and
    /// end quietly, as redis-cli ends then (killed by SIGPIPE), rather than report an error
    /// about a reader that asked for no more.
    ReaderGone,
}

/// The windows, renderer and output of one probe.
pub struct Session<W: Write> {
    windows: Windows,
    style: Style,
    /// Every sample of the probe, for `--hdr-file`.
    all: WindowStats,
    hdr_file: Option<PathBuf>,
    out: W,
    /// The text of the current event, reused so a redraw per sample allocates nothing once
    /// warm.
    text: String,
    /// A write found standard output's reader gone: nothing more is written.
    reader_gone: bool,
}

impl<W: Write> Session<W> {
    /// A probe with `options` whose first window begins at `start_us` (microseconds on the
    /// monotonic clock every later call uses), printing to `out`.
    pub fn new(options: &Options, stdout_is_tty: bool, start_us: u64, out: W) -> Self {
        let resolved = options.resolve(stdout_is_tty);
        Session {
            windows: Windows::new(resolved.mode, resolved.interval_us, start_us),
            style: resolved.style,
            all: WindowStats::new(),
            hdr_file: options.hdr_file.clone(),
            out,
            text: String::new(),
            reader_gone: false,
        }
    }

    /// A reply arrived at `now_us`, `latency_us` microseconds after its request was sent.
    pub fn sample(&mut self, now_us: u64, latency_us: u64) -> Result<Flow, Error> {
        if self.windows.is_done() {
            return Ok(Flow::Stop);
        }
        self.all.record(latency_us);
        self.text.clear();
        let print = self.windows.sample(now_us, latency_us);
        self.style.render(&print, &mut self.text);
        self.emit()
    }

    /// The clock reached `now_us`: closes a history or spectrum window whose time is up
    /// even when no reply came. Call it at least every sample period.
    pub fn tick(&mut self, now_us: u64) -> Result<Flow, Error> {
        if self.windows.is_done() {
            return Ok(Flow::Stop);
        }
        self.text.clear();
        let print = self.windows.tick(now_us);
        self.style.render(&print, &mut self.text);
        self.emit()
    }

    /// Ctrl-C at `now_us`: prints what the current window holds (or ends the live line).
    pub fn interrupt(&mut self, now_us: u64) -> Result<(), Error> {
        self.text.clear();
        let print = self.windows.interrupt(now_us);
        self.style.render(&print, &mut self.text);
        self.emit().map(|_| ())
    }

    /// Ends the probe: writes the `--hdr-file` of every sample, if asked for, and hands
    /// the output back.
    pub fn finish(mut self) -> Result<W, Error> {
        if !self.reader_gone {
            match self.out.flush() {
                Err(e) if e.kind() != ErrorKind::BrokenPipe => return Err(stdout_error(e)),
                _ => {}
            }
        }
        if let Some(path) = &self.hdr_file {
            let text = render_percentile_distribution(self.all.histogram());
            write_atomic(path, text.as_bytes())?;
        }
        Ok(self.out)
    }

    /// Every sample so far.
    pub fn all_samples(&self) -> &WindowStats {
        &self.all
    }

    /// Writes and flushes the current event's text: each line shows as soon as it is due.
    fn emit(&mut self) -> Result<Flow, Error> {
        if self.reader_gone {
            return Ok(Flow::ReaderGone);
        }
        if !self.text.is_empty() {
            let written = self
                .out
                .write_all(self.text.as_bytes())
                .and_then(|()| self.out.flush());
            match written {
                Ok(()) => {}
                Err(e) if e.kind() == ErrorKind::BrokenPipe => {
                    self.reader_gone = true;
                    return Ok(Flow::ReaderGone);
                }
                Err(e) => return Err(stdout_error(e)),
            }
        }
        Ok(if self.windows.is_done() {
            Flow::Stop
        } else {
            Flow::Continue
        })
    }
}

fn stdout_error(e: std::io::Error) -> Error {
    Error::run(format!("cannot write the latency figures: {e}"))
}

#[cfg(test)]
mod tests {
    use super::super::flags::parsed_options as options;
    use super::*;

    const INTERVAL_US: u64 = 500_000;

    /// (count, avg text) of a figures line in any format: `min: 0, max: 5, avg: 0.37 (78
    /// samples)` or `0 4 0.45 49`.
    fn count_and_avg(line: &str) -> (u64, String) {
        if let Some(rest) = line.strip_prefix("min: ") {
            let avg = rest.split("avg: ").nth(1).expect("avg");
            let (avg, count) = avg.split_once(" (").expect("count");
            let count = count.split(' ').next().expect("count");
            (count.parse().expect("count"), avg.to_string())
        } else {
            let f: Vec<&str> = line.split(' ').collect();
            (f[3].parse().expect("count"), f[2].to_string())
        }
    }

    /// The whole-millisecond samples behind a run of redis-cli's cumulative figures (one
    /// line per sample, counts 1, 2, 3...): each running total is avg × count rounded,
    /// exact while the count stays under 100 (avg has two decimals).
    fn samples_behind(lines: &[&str]) -> Vec<u64> {
        let mut samples = Vec::new();
        let mut previous_total = 0u64;
        for (i, line) in lines.iter().enumerate() {
            let (count, avg) = count_and_avg(line);
            assert_eq!(count, i as u64 + 1, "one line per sample: {line}");
            assert!(count < 100, "reconstruction is exact below 100 samples");
            let avg: f64 = avg.parse().expect("avg");
            let total = (avg * count as f64).round() as u64;
            samples.push((total - previous_total) * 1000);
            previous_total = total;
        }
        samples
    }

    /// A window end time that prints as `range` ("0.51") and lies past the interval.
    fn window_end_us(range: &str) -> u64 {
        let seconds: f64 = range.parse().expect("range");
        ((seconds * 1e6).round() as u64).max(INTERVAL_US + 1)
    }

    /// Feeds one window's samples evenly spread up to `end_us` after `start_us`.
    fn feed_window(session: &mut Session<Vec<u8>>, start_us: u64, end_us: u64, samples: &[u64]) {
        let n = samples.len() as u64;
        for (j, &latency) in samples.iter().enumerate() {
            let j = j as u64 + 1;
            let at = if j == n {
                start_us + end_us
            } else {
                start_us + end_us * j / n
            };
            session.sample(at, latency).expect("write to a Vec");
        }
    }

    #[test]
    fn live_redraws_match_redis_cli_byte_for_byte() {
        let fixture = include_str!("testdata/latency_tty.txt");
        let lines: Vec<&str> = fixture.split("\x1b[0G\x1b[2K").skip(1).collect();
        let samples = samples_behind(&lines);
        let mut session = Session::new(&options(&[]), true, 0, Vec::new());
        for (k, &latency) in samples.iter().enumerate() {
            let flow = session
                .sample((k as u64 + 1) * 10_000, latency)
                .expect("write");
            assert_eq!(flow, Flow::Continue);
        }
        let out = session.finish().expect("finish");
        assert_eq!(String::from_utf8(out).expect("utf-8"), fixture);
    }

    /// Splits a capture into windows: (per-sample figures lines, range text).
    fn windows_of(capture: &str, redraw: bool) -> Vec<(Vec<&str>, &str)> {
        let mut windows = Vec::new();
        let mut current = Vec::new();
        let pieces: Vec<&str> = if redraw {
            capture.split("\x1b[0G\x1b[2K").skip(1).collect()
        } else {
            capture.lines().collect()
        };
        for piece in pieces {
            let (figures, range) = match piece.split_once(" -- ") {
                Some((f, r)) => (f, Some(r)),
                None => (piece, None),
            };
            if !figures.is_empty() {
                current.push(figures);
            }
            if let Some(range) = range {
                let range = range.trim_end().trim_end_matches(" seconds range");
                windows.push((std::mem::take(&mut current), range));
            }
        }
        assert!(current.is_empty(), "capture ends with a window");
        windows
    }

    #[test]
    fn history_on_a_terminal_matches_redis_cli_byte_for_byte() {
        let fixture = include_str!("testdata/history_tty.txt");
        let mut session = Session::new(&options(&["--history", "-i", "0.5"]), true, 0, Vec::new());
        let mut start = 0;
        let windows = windows_of(fixture, true);
        assert!(windows.len() >= 2);
        for (lines, range) in windows {
            let end = window_end_us(range);
            feed_window(&mut session, start, end, &samples_behind(&lines));
            start += end;
        }
        let out = session.finish().expect("finish");
        assert_eq!(String::from_utf8(out).expect("utf-8"), fixture);
    }

    #[test]
    fn raw_history_prints_redis_cli_last_line_of_each_window_and_its_length() {
        // redis-cli prints a raw line per sample and ` -- 0.51 seconds range` per window;
        // kvbench prints each window's final line once, with its length as a fifth field.
        let fixture = include_str!("testdata/history_raw.txt");
        let mut session = Session::new(&options(&["--history", "-i", "0.5"]), false, 0, Vec::new());
        let mut expected = String::new();
        let mut start = 0;
        for (lines, range) in windows_of(fixture, false) {
            let end = window_end_us(range);
            feed_window(&mut session, start, end, &samples_behind(&lines));
            start += end;
            expected.push_str(lines.last().expect("window has samples"));
            expected.push_str(&format!(" {range}\n"));
        }
        let out = session.finish().expect("finish");
        assert_eq!(String::from_utf8(out).expect("utf-8"), expected);
    }

    #[test]
    fn one_shot_stops_after_its_window_and_writes_the_hdr_file() {
        let dir =
            std::env::temp_dir().join(format!("kvbench-latency-session-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("all.txt");
        let path_arg = path.to_string_lossy().to_string();
        let o = options(&[
            "--json",
            "--precision=us",
            "--percentiles=50",
            "--hdr-file",
            &path_arg,
        ]);
        let mut session = Session::new(&o, true, 1_000, Vec::new());
        let mut flow = Flow::Continue;
        let mut at = 1_000;
        while flow == Flow::Continue {
            at += 10_000;
            flow = session.sample(at, 250).expect("write");
        }
        assert_eq!(at, 1_011_000, "first sample past one second");
        assert_eq!(session.sample(at + 10_000, 1).expect("write"), Flow::Stop);
        assert_eq!(session.all_samples().count(), 101);
        let out = String::from_utf8(session.finish().expect("finish")).expect("utf-8");
        assert_eq!(
            out,
            "{\"min\": 250, \"max\": 250, \"avg\": 250.00, \"count\": 101, \"p50\": 250}\n"
        );
        let hdr = std::fs::read_to_string(&path).expect("hdr file written");
        assert!(hdr.starts_with("       Value   Percentile   TotalCount 1/(1-Percentile)"));
        assert!(hdr.contains("Total count    =          101]"), "{hdr}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn interrupt_ends_the_live_line() {
        let mut session = Session::new(&options(&[]), true, 0, Vec::new());
        session.sample(10_000, 1_500).expect("write");
        session.interrupt(20_000).expect("write");
        assert_eq!(session.tick(30_000).expect("tick"), Flow::Stop);
        let out = String::from_utf8(session.finish().expect("finish")).expect("utf-8");
        assert_eq!(out, "\x1b[0G\x1b[2Kmin: 1, max: 2, avg: 1.50 (1 samples)\n");
    }

    /// Output whose every write fails with `kind`, counting the attempts.
    struct Failing(ErrorKind, u32);
    impl Write for Failing {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            self.1 += 1;
            Err(self.0.into())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_failed_write_is_an_error_not_a_panic() {
        let out = Failing(ErrorKind::StorageFull, 0);
        let mut session = Session::new(&options(&[]), true, 0, out);
        let err = session.sample(10, 100).expect_err("disk full");
        assert!(
            err.to_string()
                .starts_with("cannot write the latency figures")
        );
    }

    #[test]
    fn a_reader_gone_stops_the_probe_quietly_and_writes_nothing_more() {
        let out = Failing(ErrorKind::BrokenPipe, 0);
        let mut session = Session::new(&options(&["--history", "-i", "0.5"]), true, 0, out);
        assert_eq!(session.sample(10, 100).expect("no error"), Flow::ReaderGone);
        assert_eq!(session.tick(600_000).expect("no error"), Flow::ReaderGone);
        session.interrupt(700_000).expect("no error");
        let out = session.finish().expect("no error at the end either");
        assert_eq!(out.1, 1, "one write found the reader gone, none after it");
    }

    #[test]
    fn an_unwritable_hdr_file_is_an_error() {
        let o = options(&["--hdr-file", "/nonexistent-dir/x/all.txt"]);
        let session = Session::new(&o, false, 0, Vec::new());
        let err = session.finish().map(|_| ()).expect_err("no such directory");
        assert!(err.to_string().contains("all.txt"), "{err}");
    }
}
