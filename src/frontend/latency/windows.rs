//! The sampling windows of `kvbench latency` as a pure state machine: fed samples
//! (microseconds) and clock ticks, it says what to print and when the probe is over.
//!
//! | mode | after a sample | when a window's time is up | on Ctrl-C |
//! | --- | --- | --- | --- |
//! | [`Mode::Live`] | redraw the running figures | (no windows) | end the line |
//! | [`Mode::Once`] | nothing | print the window, stop | print what was measured |
//! | [`Mode::History`] | redraw, if `redraw` | print the window, start afresh | print the partial window |
//! | [`Mode::Dist`] | nothing | print the spectrum (legend every 20th) | print the partial spectrum |
//!
//! As in redis-cli, a window closes at the first sample that arrives after its length
//! has passed, and that sample belongs to it. History and spectrum windows also close on
//! a tick, so a server that stops answering still gets a line (of 0 samples) per window; a
//! spectrum needs at least one sample, and a one-shot window waits for the reply it is
//! owed rather than end without it.
//!
//! Times are microseconds on any monotonic clock, the same one for every call.

use super::spectrum::Spectrum;
use super::window_stats::WindowStats;

/// How often redis-cli's `--latency-dist` prints its legend: before the first spectrum
/// line and then every this many lines.
const LEGEND_EVERY: u64 = 20;

/// What the probe shows, resolved from the flags and whether stdout is a terminal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Running figures over every sample so far, redrawn in place until Ctrl-C.
    Live,
    /// One window, one line, then the probe is over.
    Once,
    /// A line per window with the figures reset each window; `redraw` also redraws the
    /// current window's figures after every sample (standard format only).
    History { redraw: bool },
    /// A spectrum line per window, never ending by itself.
    Dist,
}

/// What to print after an event, borrowing the figures it needs.
#[derive(Debug)]
pub enum Print<'a> {
    /// Nothing changes on screen.
    Nothing,
    /// Redraw the running figures in place.
    Redraw(&'a WindowStats),
    /// A history window ended after `seconds`: print its line.
    Window {
        stats: &'a WindowStats,
        seconds: f64,
    },
    /// The one-shot window ended: print its line; the probe is over.
    Once(&'a WindowStats),
    /// A spectrum window ended: print the legend first if `legend`, then the spectrum.
    Spectrum {
        spectrum: &'a Spectrum,
        stats: &'a WindowStats,
        legend: bool,
    },
    /// Interrupted in live mode: end the redrawn line.
    EndLine,
}

/// The windows of one probe: the current window's figures and when it began.
#[derive(Debug)]
pub struct Windows {
    mode: Mode,
    interval_us: u64,
    window_start_us: u64,
    stats: WindowStats,
    spectrum: Spectrum,
    /// The figures were handed out for a window that has ended: clear them on the next
    /// event (they are borrowed by the [`Print`] until then).
    reset_pending: bool,
    /// Spectrum lines printed so far (the legend repeats every [`LEGEND_EVERY`]).
    spectra: u64,
    done: bool,
}

impl Windows {
    /// Windows of `interval_us` microseconds, the first beginning at `start_us`.
    pub fn new(mode: Mode, interval_us: u64, start_us: u64) -> Self {
        Windows {
            mode,
            interval_us,
            window_start_us: start_us,
            stats: WindowStats::new(),
            spectrum: Spectrum::new(),
            reset_pending: false,
            spectra: 0,
            done: false,
        }
    }

    /// The mode these windows run in.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// True once the probe is over (a one-shot window printed, or interrupted): further
    /// events print nothing.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// One reply arrived at `now_us` after `latency_us` microseconds.
    pub fn sample(&mut self, now_us: u64, latency_us: u64) -> Print<'_> {
        if self.done {
            return Print::Nothing;
        }
        self.start_pending_window();
        self.stats.record(latency_us);
        if self.mode == Mode::Dist {
            self.spectrum.record(latency_us);
        }
        if self.mode != Mode::Live && self.time_is_up(now_us) {
            return self.close(now_us);
        }
        match self.mode {
            Mode::Live | Mode::History { redraw: true } => Print::Redraw(&self.stats),
            _ => Print::Nothing,
        }
    }

    /// The clock reached `now_us` with no reply: closes a history or spectrum window whose
    /// time is up.
    pub fn tick(&mut self, now_us: u64) -> Print<'_> {
        if self.done {
            return Print::Nothing;
        }
        self.start_pending_window();
        let closes = match self.mode {
            Mode::History { .. } => true,
            Mode::Dist => self.stats.count() > 0,
            Mode::Live | Mode::Once => false,
        };
        if closes && self.time_is_up(now_us) {
            self.close(now_us)
        } else {
            Print::Nothing
        }
    }

    /// Ctrl-C at `now_us`: the probe is over; prints what the current window holds.
    pub fn interrupt(&mut self, now_us: u64) -> Print<'_> {
        if self.done {
            return Print::Nothing;
        }
        self.start_pending_window();
        self.done = true;
        if self.mode == Mode::Live {
            return Print::EndLine;
        }
        // A one-shot window is owed even empty (Ctrl-C before the first reply): its
        // figures then print as a window with no sample does (`null` in JSON), so the
        // output is never missing and a zero is never mistaken for a measurement. A
        // history's partial empty window adds nothing to the lines already printed.
        if self.stats.count() == 0 && self.mode != Mode::Once {
            return Print::Nothing;
        }
        self.close(now_us)
    }

    fn time_is_up(&self, now_us: u64) -> bool {
        now_us.saturating_sub(self.window_start_us) > self.interval_us
    }

    /// Clears the figures of a window that ended on an earlier event; the next window
    /// began when that one ended.
    fn start_pending_window(&mut self) {
        if self.reset_pending {
            self.stats.reset();
            self.spectrum.reset();
            self.reset_pending = false;
        }
    }

    /// Ends the current window at `now_us`; the next begins then.
    fn close(&mut self, now_us: u64) -> Print<'_> {
        let seconds = now_us.saturating_sub(self.window_start_us) as f64 / 1e6;
        self.window_start_us = now_us;
        self.reset_pending = true;
        match self.mode {
            Mode::Once => {
                self.done = true;
                Print::Once(&self.stats)
            }
            Mode::History { .. } => Print::Window {
                stats: &self.stats,
                seconds,
            },
            Mode::Dist => {
                let legend = self.spectra.is_multiple_of(LEGEND_EVERY);
                self.spectra += 1;
                Print::Spectrum {
                    spectrum: &self.spectrum,
                    stats: &self.stats,
                    legend,
                }
            }
            // Live mode has no windows; `interrupt` answers it before closing.
            Mode::Live => Print::EndLine,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000;
    const SEC: u64 = 1_000_000;

    /// (count, min µs, max µs) of a print that carries figures.
    fn figures(p: &Print<'_>) -> Option<(u64, u64, u64)> {
        let s = match p {
            Print::Redraw(s) | Print::Once(s) => s,
            Print::Window { stats, .. } | Print::Spectrum { stats, .. } => stats,
            Print::Nothing | Print::EndLine => return None,
        };
        Some((s.count(), s.min_us(), s.max_us()))
    }

    #[test]
    fn live_redraws_every_sample_and_never_resets() {
        let mut w = Windows::new(Mode::Live, SEC, 0);
        assert_eq!(figures(&w.sample(10 * MS, 300)), Some((1, 300, 300)));
        assert_eq!(figures(&w.sample(5 * SEC, 100)), Some((2, 100, 300)));
        assert!(matches!(w.tick(100 * SEC), Print::Nothing));
        assert_eq!(figures(&w.sample(200 * SEC, 900)), Some((3, 100, 900)));
        assert!(matches!(w.interrupt(201 * SEC), Print::EndLine));
        assert!(w.is_done());
        assert!(matches!(w.sample(202 * SEC, 1), Print::Nothing));
    }

    #[test]
    fn once_prints_at_the_first_sample_after_the_interval_and_stops() {
        let mut w = Windows::new(Mode::Once, SEC, 0);
        for i in 1..=99 {
            assert!(matches!(w.sample(i * 10 * MS, 200), Print::Nothing), "{i}");
        }
        // Exactly at the interval: not yet past it.
        assert!(matches!(w.sample(SEC, 200), Print::Nothing));
        // A tick past the interval does not end it: the reply in flight is owed.
        assert!(matches!(w.tick(SEC + 5 * MS), Print::Nothing));
        let last = w.sample(SEC + 10 * MS, 4_000);
        assert!(matches!(last, Print::Once(_)));
        assert_eq!(figures(&last), Some((101, 200, 4_000)));
        assert!(w.is_done());
        assert!(matches!(w.sample(SEC + 20 * MS, 1), Print::Nothing));
        assert!(matches!(w.interrupt(SEC + 30 * MS), Print::Nothing));
    }

    #[test]
    fn once_interrupted_prints_what_it_has_even_empty() {
        let mut w = Windows::new(Mode::Once, SEC, 0);
        w.sample(10 * MS, 150);
        assert_eq!(figures(&w.interrupt(20 * MS)), Some((1, 150, 150)));
        let mut empty = Windows::new(Mode::Once, SEC, 0);
        match empty.interrupt(20 * MS) {
            Print::Once(stats) => assert_eq!(stats.count(), 0),
            _ => panic!("the empty window is printed"),
        }
        assert!(empty.is_done());
        assert!(matches!(empty.interrupt(30 * MS), Print::Nothing));
    }

    #[test]
    fn history_resets_each_window_and_measures_its_length() {
        let mut w = Windows::new(Mode::History { redraw: false }, 15 * SEC, 0);
        w.sample(SEC, 100);
        w.sample(2 * SEC, 5_000);
        match w.sample(15 * SEC + 10 * MS, 300) {
            Print::Window { stats, seconds } => {
                assert_eq!(
                    (stats.count(), stats.min_us(), stats.max_us()),
                    (3, 100, 5_000)
                );
                assert!((seconds - 15.01).abs() < 1e-9);
            }
            other => panic!("expected a window, got {other:?}"),
        }
        // The next window starts where the last one ended, with fresh figures.
        assert!(matches!(w.sample(16 * SEC, 700), Print::Nothing));
        match w.tick(30 * SEC + 20 * MS) {
            Print::Window { stats, seconds } => {
                assert_eq!(
                    (stats.count(), stats.min_us(), stats.max_us()),
                    (1, 700, 700)
                );
                assert!((seconds - 15.01).abs() < 1e-9);
            }
            other => panic!("expected a window, got {other:?}"),
        }
        assert!(!w.is_done());
    }

    #[test]
    fn history_prints_empty_windows_when_no_reply_comes() {
        let mut w = Windows::new(Mode::History { redraw: false }, SEC, 0);
        assert!(matches!(w.tick(SEC), Print::Nothing));
        match w.tick(SEC + 1) {
            Print::Window { stats, .. } => assert_eq!(stats.count(), 0),
            other => panic!("expected an empty window, got {other:?}"),
        }
    }

    #[test]
    fn history_redraw_shows_the_current_window_only() {
        let mut w = Windows::new(Mode::History { redraw: true }, SEC, 0);
        assert_eq!(figures(&w.sample(10 * MS, 900)), Some((1, 900, 900)));
        assert!(matches!(w.sample(SEC + 1, 100), Print::Window { .. }));
        assert_eq!(figures(&w.sample(SEC + 10 * MS, 50)), Some((1, 50, 50)));
        // Ctrl-C ends the partial window with its own line.
        match w.interrupt(SEC + 500 * MS) {
            Print::Window { stats, seconds } => {
                assert_eq!(stats.count(), 1);
                assert!((seconds - 0.499_999).abs() < 1e-9);
            }
            other => panic!("expected the partial window, got {other:?}"),
        }
        assert!(w.is_done());
    }

    #[test]
    fn dist_shows_the_legend_before_the_first_and_every_twentieth_spectrum() {
        let mut w = Windows::new(Mode::Dist, SEC, 0);
        let mut legends = Vec::new();
        for window in 0..41u64 {
            let base = window * (SEC + 1);
            assert!(matches!(w.sample(base + 10 * MS, 80), Print::Nothing));
            match w.sample(base + SEC + 1, 1_500) {
                Print::Spectrum {
                    spectrum,
                    stats,
                    legend,
                } => {
                    assert_eq!(spectrum.total(), 2);
                    assert_eq!(spectrum.counts()[1], 1);
                    assert_eq!(spectrum.counts()[5], 1);
                    assert_eq!(stats.count(), 2);
                    if legend {
                        legends.push(window);
                    }
                }
                other => panic!("expected a spectrum, got {other:?}"),
            }
        }
        assert_eq!(legends, vec![0, 20, 40]);
    }

    #[test]
    fn dist_windows_without_samples_stay_open() {
        let mut w = Windows::new(Mode::Dist, SEC, 0);
        assert!(matches!(w.tick(5 * SEC), Print::Nothing));
        // The window still began at 0, so the first sample closes it.
        assert!(matches!(
            w.sample(5 * SEC + 1, 100),
            Print::Spectrum { legend: true, .. }
        ));
        assert!(matches!(w.tick(6 * SEC + 2), Print::Nothing));
        assert!(matches!(w.sample(6 * SEC + 3, 100), Print::Spectrum { .. }));
        // With a sample in it, a window also closes on a tick.
        w.sample(6 * SEC + 4, 100);
        assert!(matches!(w.tick(7 * SEC + 4), Print::Spectrum { .. }));
    }
}
