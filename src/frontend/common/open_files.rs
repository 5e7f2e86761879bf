//! The open files a run's connections need, checked before anything starts: the soft
//! limit (`ulimit -n`) is raised to fit when the hard limit allows, else one usage error
//! says how many are needed, so `-c 4294967295` is refused instead of allocating clients
//! for connections that could never open.

use crate::error::{Error, Result};

/// Descriptors a run uses besides its connections: stdio, output files, the resolver,
/// the signal pipe, with room to spare.
const RESERVE: u64 = 64;
/// Descriptors per worker thread: its epoll instance and its waker.
const PER_THREAD: u64 = 2;

/// Open files needed by `threads` workers holding `connections` connections in all, each
/// taking `per_connection` descriptors (2 with TLS: a timer bounds the handshake).
pub fn needed(connections: u64, threads: u64, per_connection: u64) -> u64 {
    connections
        .saturating_mul(per_connection)
        .saturating_add(threads.saturating_mul(PER_THREAD))
        .saturating_add(RESERVE)
}

/// Makes room for `need` open files: `Ok` when the soft limit already allows it or could
/// be raised to it; else a usage error naming `what` (the flags that asked, e.g.
/// `--threads=2 x --clients=5000`) and the limits.
pub fn ensure(need: u64, what: &str) -> Result<()> {
    let (soft, hard) = limits()?;
    if need <= soft {
        return Ok(());
    }
    if need > hard {
        return Err(Error::usage(format!(
            "{what} needs {need} open files (one per connection), above this system's limit \
             of {hard} (ulimit -Hn): use fewer connections, or raise the limit."
        )));
    }
    let raised = libc::rlimit {
        rlim_cur: need,
        rlim_max: hard,
    };
    // SAFETY: setrlimit reads the struct it is given, which is fully initialised.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } != 0 {
        return Err(Error::usage(format!(
            "{what} needs {need} open files (one per connection), above the limit of {soft} \
             (ulimit -n), which could not be raised: {}",
            std::io::Error::last_os_error()
        )));
    }
    Ok(())
}

/// The soft and hard limits on open files.
fn limits() -> Result<(u64, u64)> {
    let mut current = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct it is given, which lives for the call.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut current) } != 0 {
        return Err(Error::usage(format!(
            "cannot read the open-file limit: {}",
            std::io::Error::last_os_error()
        )));
    }
    Ok((current.rlim_cur, current.rlim_max))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn needs_count_every_descriptor_and_never_overflow() {
        assert_eq!(needed(10_000, 2, 1), 10_000 + 4 + RESERVE);
        assert_eq!(needed(100, 1, 2), 200 + 2 + RESERVE);
        assert_eq!(needed(u64::MAX, u64::MAX, 2), u64::MAX);
    }

    #[test]
    fn within_the_limit_is_fine_and_past_the_hard_limit_is_refused() {
        let (soft, hard) = limits().expect("the limits");
        assert!(ensure(soft.min(1), "one").is_ok());
        if hard < u64::MAX {
            let err = ensure(hard + 1, "--clients=4294967295").expect_err("past the hard limit");
            let text = err.to_string();
            assert!(text.starts_with("--clients=4294967295 needs"), "{text}");
            assert!(text.contains("ulimit -Hn"), "{text}");
        }
    }
}
