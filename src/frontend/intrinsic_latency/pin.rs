//! Pins the calling thread to one CPU (sched_setaffinity), so the intrinsic-latency loop
//! measures what that CPU's scheduler does to it rather than migrations between CPUs.

use crate::error::Error;

/// Pins the calling thread to `cpu`, or to the CPU it runs on now when `None`; returns
/// the CPU pinned to. A CPU this process may not use is a usage error.
#[cfg(target_os = "linux")]
pub fn pin_current_thread(cpu: Option<usize>) -> Result<usize, Error> {
    let allowed = allowed_cpus()?;
    let cpu = match cpu {
        Some(cpu) => {
            if !allowed.contains(&cpu) {
                return Err(Error::usage(format!(
                    "--cpu {cpu}: this process may not run on CPU {cpu} (allowed: {})",
                    describe(&allowed)
                )));
            }
            cpu
        }
        None => {
            // SAFETY: sched_getcpu has no preconditions; it returns -1 on failure.
            let now = unsafe { libc::sched_getcpu() };
            match usize::try_from(now) {
                Ok(now) if allowed.contains(&now) => now,
                _ => *allowed
                    .first()
                    .ok_or_else(|| Error::run("this process may run on no CPU at all"))?,
            }
        }
    };
    // SAFETY: cpu_set_t is plain data (all zeroes is the empty set); CPU_SET is given an
    // index below CPU_SETSIZE (allowed_cpus only lists such CPUs); sched_setaffinity reads
    // exactly size_of::<cpu_set_t>() bytes of the set.
    let rc = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    if rc != 0 {
        return Err(Error::run(format!(
            "cannot pin the test to CPU {cpu}: {}",
            std::io::Error::last_os_error()
        )));
    }
    Ok(cpu)
}

/// Without sched_setaffinity the test runs unpinned; say so rather than pretend.
#[cfg(not(target_os = "linux"))]
pub fn pin_current_thread(cpu: Option<usize>) -> Result<usize, Error> {
    match cpu {
        Some(cpu) => Err(Error::usage(format!(
            "--cpu {cpu}: pinning to a CPU is only supported on Linux"
        ))),
        None => Ok(0),
    }
}

/// The CPUs this thread may run on, in ascending order.
#[cfg(target_os = "linux")]
fn allowed_cpus() -> Result<Vec<usize>, Error> {
    // SAFETY: as above; sched_getaffinity writes at most size_of::<cpu_set_t>() bytes, and
    // CPU_ISSET is only asked about indices below CPU_SETSIZE.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Err(Error::run(format!(
                "cannot read which CPUs this process may use: {}",
                std::io::Error::last_os_error()
            )));
        }
        let max = usize::try_from(libc::CPU_SETSIZE).unwrap_or(0);
        Ok((0..max).filter(|&cpu| libc::CPU_ISSET(cpu, &set)).collect())
    }
}

/// `0-3,6,8-9`: CPU numbers in ascending order as ranges.
fn describe(cpus: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let first = cpus[i];
        let mut last = first;
        while i + 1 < cpus.len() && cpus[i + 1] == last + 1 {
            i += 1;
            last = cpus[i];
        }
        parts.push(if first == last {
            first.to_string()
        } else {
            format!("{first}-{last}")
        });
        i += 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describes_cpu_lists_as_ranges() {
        assert_eq!(describe(&[]), "");
        assert_eq!(describe(&[0]), "0");
        assert_eq!(describe(&[0, 1, 2, 3, 6, 8, 9]), "0-3,6,8-9");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn pins_a_thread_to_one_allowed_cpu_and_refuses_others() {
        // A thread of its own, so the test runner's threads keep their CPUs.
        std::thread::spawn(|| {
            let allowed = allowed_cpus().expect("affinity readable");
            let cpu = pin_current_thread(None).expect("pin");
            assert!(allowed.contains(&cpu));
            assert_eq!(allowed_cpus().expect("affinity readable"), vec![cpu]);
            let err = pin_current_thread(Some(100_000)).expect_err("no such CPU");
            assert!(
                err.to_string()
                    .starts_with("--cpu 100000: this process may not run")
            );
        })
        .join()
        .expect("pinning thread");
    }
}
