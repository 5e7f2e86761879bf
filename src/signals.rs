//! Ctrl-C, SIGTERM and SIGHUP become a flag the runner polls, so a stopped run still writes
//! its results. SIGHUP is among them because a dropped ssh or tmux session sends it: its
//! default action would kill the run and lose everything measured.

use std::sync::atomic::{AtomicI32, Ordering};

/// The last stop signal received (0: none).
static RECEIVED: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(signal: libc::c_int) {
    // Only an atomic store: the one thing that is async-signal-safe and all the runner needs.
    RECEIVED.store(signal, Ordering::SeqCst);
}

/// Routes SIGINT, SIGTERM and SIGHUP to [`received`] instead of killing the process.
pub fn install() {
    install_with(libc::SA_RESTART);
}

/// As [`install`], but a blocking `read` that a stop signal interrupts fails with `EINTR`
/// instead of resuming: a prompt waiting for a line (`kvbench latency --askpass`) must
/// notice Ctrl-C, restore the terminal and end, where a restarted read would wait on.
/// [`install`] afterwards puts the usual restarting handlers back.
pub fn install_interrupting() {
    install_with(0);
}

fn install_with(flags: libc::c_int) {
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: `on_signal` only stores to an atomic, which is async-signal-safe;
        // the sigaction struct is fully initialised before use.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as *const () as libc::sighandler_t;
            action.sa_flags = flags;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}

/// The stop signal received so far, if any.
pub fn received() -> Option<i32> {
    match RECEIVED.load(Ordering::SeqCst) {
        0 => None,
        signal => Some(signal),
    }
}

/// Exit status for a run stopped by `signal`: 128 + the signal number, as shells report it.
pub fn exit_code(signal: i32) -> i32 {
    128 + signal
}
