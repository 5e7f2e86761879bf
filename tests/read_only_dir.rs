//! An output directory that really refuses new files, end to end. As root (CI runs as
//! root, and chmod stops no root) it is a tmpfs this test mounts and remounts read-only;
//! as another user its mode bits. Every front end that writes a file says so in one line
//! naming the directory, with no panic: before the run when the directory refuses from
//! the start (nothing is sent), and after it when it starts refusing mid-run, where the
//! run's results are still printed on stdout and the exit status is 1. As root without
//! the right to mount, each test says on stderr why it skipped.

mod common;

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::{Duration, Instant};

use common::{CONDITION_TIMEOUT, RedisServer, Run, TestDir, kvbench, wait_until};

/// How long the mid-run cases run: long enough for the test to see requests on the server
/// and turn the directory read-only before the run ends, on a loaded 2-core machine.
const RUN_SECONDS: u64 = 10;

/// A scratch directory that can be made to refuse new files for real: as root a tmpfs
/// mounted on it (chmod stops no root), remounted read-only; otherwise its mode bits.
/// Dropping it undoes that (unmounts, or restores the mode) and removes the directory,
/// a failing test included.
struct RefusingDir {
    dir: TestDir,
    how: How,
}

/// What makes the directory refuse.
#[derive(Clone, Copy, PartialEq)]
enum How {
    /// A tmpfs remounted read-only: `EROFS`, for root too.
    ReadOnlyMount,
    /// Mode 0555: `EACCES`, for a user other than root only.
    NoWritePermission,
}

impl RefusingDir {
    /// The directory, still writable; `Err` says why this machine cannot make one refuse,
    /// for the skip message.
    fn new() -> Result<RefusingDir, String> {
        let dir = TestDir::new("refusing-dir");
        // SAFETY: geteuid has no preconditions and cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            return Ok(RefusingDir {
                dir,
                how: How::NoWritePermission,
            });
        }
        let target = c_path(dir.path());
        let fs = CString::new("tmpfs").expect("no NUL");
        let data = CString::new("size=4m,mode=0755").expect("no NUL");
        // SAFETY: NUL-terminated strings that outlive the call; a plain mount, no flags.
        let rc = unsafe {
            libc::mount(
                fs.as_ptr(),
                target.as_ptr(),
                fs.as_ptr(),
                0,
                data.as_ptr().cast(),
            )
        };
        if rc != 0 {
            return Err(format!(
                "root, whom chmod does not stop, yet cannot mount a tmpfs (no \
                 CAP_SYS_ADMIN here?): {}",
                std::io::Error::last_os_error()
            ));
        }
        Ok(RefusingDir {
            dir,
            how: How::ReadOnlyMount,
        })
    }

    /// Refuses every new file from now on.
    fn refuse(&self) {
        let target = c_path(self.dir.path());
        let rc = match self.how {
            // SAFETY: a NUL-terminated path that outlives the call; a remount takes no
            // source, type or data.
            How::ReadOnlyMount => unsafe {
                libc::mount(
                    std::ptr::null(),
                    target.as_ptr(),
                    std::ptr::null(),
                    libc::MS_REMOUNT | libc::MS_RDONLY,
                    std::ptr::null(),
                )
            },
            // SAFETY: as above.
            How::NoWritePermission => unsafe { libc::chmod(target.as_ptr(), 0o555) },
        };
        assert_eq!(
            rc,
            0,
            "make the directory refuse: {}",
            std::io::Error::last_os_error()
        );
        // Checked, not assumed: the test means nothing if a file can still be created.
        let probe = self.dir.file("probe");
        let err = std::fs::File::create(&probe).expect_err("the directory refuses a file");
        let expected = match self.how {
            How::ReadOnlyMount => libc::EROFS,
            How::NoWritePermission => libc::EACCES,
        };
        assert_eq!(err.raw_os_error(), Some(expected), "{err}");
    }

    /// The reason the error line gives, in strerror's words.
    fn reason(&self) -> &'static str {
        match self.how {
            How::ReadOnlyMount => "Read-only file system",
            How::NoWritePermission => "Permission denied",
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn file_arg(&self, name: &str) -> String {
        self.dir.file_arg(name)
    }
}

impl Drop for RefusingDir {
    fn drop(&mut self) {
        let target = c_path(self.dir.path());
        // SAFETY: a NUL-terminated path that outlives the call. MNT_DETACH: unmounted even
        // if a process this test failed to end still has it open. The TestDir's own drop
        // then removes the directory, writable again.
        unsafe {
            match self.how {
                How::ReadOnlyMount => libc::umount2(target.as_ptr(), libc::MNT_DETACH),
                How::NoWritePermission => libc::chmod(target.as_ptr(), 0o755),
            };
        }
    }
}

fn c_path(path: &Path) -> CString {
    CString::new(path.as_os_str().as_bytes()).expect("a path without NUL")
}

/// The directory, or `None` after saying on stderr why the test skips. A machine where
/// root cannot mount (a container without CAP_SYS_ADMIN) has no way to make a directory
/// refuse root: failing there would test the machine, not kvbench.
fn refusing_dir_or_skip(test: &str) -> Option<RefusingDir> {
    match RefusingDir::new() {
        Ok(dir) => Some(dir),
        Err(why) => {
            eprintln!("{test}: skipped: {why}");
            None
        }
    }
}

/// The run's stderr has exactly one error line, it names `dir` as the directory that
/// refused the file, and nothing panicked.
fn one_line_naming(run: &Run, dir: &RefusingDir) {
    let stderr = run.stderr_text();
    assert!(!stderr.contains("panicked"), "{}", run.describe());
    let errors: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("error: "))
        .collect();
    assert_eq!(errors.len(), 1, "one error line: {}", run.describe());
    let expected = format!(
        "cannot create a file in the directory {} (the file is replaced through a \
         temporary file beside it): {}",
        dir.path().display(),
        dir.reason()
    );
    assert!(errors[0].ends_with(&expected), "{}", run.describe());
}

/// Read-only from the start: each front end's check before the run refuses in one line,
/// exit 1, and the server executed nothing.
#[test]
fn a_read_only_directory_is_refused_before_any_request() {
    let Some(dir) = refusing_dir_or_skip("a_read_only_directory_is_refused_before_any_request")
    else {
        return;
    };
    // A file that exists already: the file may be there, the directory still refuses
    // the temporary that replaces it.
    std::fs::write(dir.path().join("old.json"), b"{}").expect("write while writable");
    dir.refuse();
    let server = RedisServer::start();
    let port = server.port.to_string();
    let json = dir.file_arg("old.json");
    let prefix = dir.file_arg("hdr");
    let cases: [Vec<&str>; 5] = [
        vec!["-p", &port, "-n", "100", "--json-out-file", &json],
        vec!["-p", &port, "-n", "100", "--hdr-file-prefix", &prefix],
        vec![
            "redis-benchmark",
            "-p",
            &port,
            "-t",
            "set",
            "-n",
            "100",
            "--json-out-file",
            &json,
        ],
        vec![
            "zbench",
            "-p",
            &port,
            "-mode",
            "load",
            "-r",
            "100",
            "-json-out-file",
            &json,
        ],
        vec![
            "latency",
            "-p",
            &port,
            "--json",
            "-i",
            "0.1",
            "--hdr-file",
            &json,
        ],
    ];
    server.config_resetstat();
    for args in cases {
        let run = kvbench(&args).run();
        assert_eq!(run.status.code(), Some(1), "{args:?}: {}", run.describe());
        assert_eq!(
            run.stderr_text().lines().count(),
            1,
            "{args:?}: {}",
            run.describe()
        );
        one_line_naming(&run, &dir);
    }
    // The harness's own INFO calls are all the server saw.
    let stats = server.commandstats();
    assert!(
        stats.keys().all(|c| c == "info" || c == "config|resetstat"),
        "{stats:?}"
    );
    assert_eq!(
        std::fs::read(dir.path().join("old.json")).expect("still there"),
        b"{}"
    );
}

/// Turns `dir` read-only once the server has executed `command`, before the run (spawned
/// at `spawned`, ending [`RUN_SECONDS`] later) can end; waits for it to exit.
fn read_only_mid_run(
    dir: &RefusingDir,
    server: &RedisServer,
    command: &str,
    run: common::Background,
    spawned: Instant,
) -> Run {
    wait_until(
        &format!("{command} on the server"),
        CONDITION_TIMEOUT,
        || server.commandstats().get(command).copied().unwrap_or(0) > 0,
    );
    dir.refuse();
    assert!(
        spawned.elapsed() < Duration::from_secs(RUN_SECONDS),
        "the machine held this test back past the run's end: it proves nothing"
    );
    run.wait(Duration::from_secs(RUN_SECONDS + 60))
}

/// The memtier front end: its table on stdout, then the JSON and HDR files refused, in one
/// line naming the directory and every file; exit 1.
#[test]
fn memtier_results_are_printed_when_the_directory_turns_read_only() {
    let Some(dir) =
        refusing_dir_or_skip("memtier_results_are_printed_when_the_directory_turns_read_only")
    else {
        return;
    };
    let server = RedisServer::start();
    let port = server.port.to_string();
    let time = format!("--test-time={RUN_SECONDS}");
    let json = dir.file_arg("run.json");
    let prefix = dir.file_arg("hdr");
    let spawned = Instant::now();
    let run = kvbench(&[
        "-p",
        &port,
        "-t",
        "1",
        "-c",
        "1",
        &time,
        "--hide-histogram",
        "--json-out-file",
        &json,
        "--hdr-file-prefix",
        &prefix,
    ])
    .spawn();
    let out = read_only_mid_run(&dir, &server, "set", run, spawned);
    assert_eq!(out.status.code(), Some(1), "{}", out.describe());
    one_line_naming(&out, &dir);
    // Every file refused is named on that line, not only the first.
    let stderr = out.stderr_text();
    for file in [
        format!("{prefix}_FULL_RUN_1.txt"),
        format!("{prefix}_FULL_RUN_1.hgrm"),
        json.clone(),
    ] {
        assert!(
            stderr.contains(&format!("cannot write {file}: ")),
            "{file}: {}",
            out.describe()
        );
    }
    let stdout = out.stdout_text();
    let totals = stdout
        .lines()
        .find(|l| l.starts_with("Totals "))
        .unwrap_or_else(|| panic!("no Totals row: {}", out.describe()));
    let ops: f64 = totals
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{totals}"));
    assert!(ops > 0.0, "{totals}");
    assert!(!Path::new(&json).exists(), "{json}");
}

/// zbench: its summary on stdout, then `-json-out-file` refused in one line; exit 1.
#[test]
fn zbench_results_are_printed_when_the_directory_turns_read_only() {
    let Some(dir) =
        refusing_dir_or_skip("zbench_results_are_printed_when_the_directory_turns_read_only")
    else {
        return;
    };
    let server = RedisServer::start();
    let port = server.port.to_string();
    let json = dir.file_arg("zbench.json");
    // One ZADD per key, 100 a second for RUN_SECONDS.
    let keys = (100 * RUN_SECONDS).to_string();
    let spawned = Instant::now();
    let run = kvbench(&[
        "zbench",
        "-p",
        &port,
        "-mode",
        "load",
        "-c",
        "1",
        "-rps",
        "100",
        "-r",
        &keys,
        "-json-out-file",
        &json,
    ])
    .spawn();
    let out = read_only_mid_run(&dir, &server, "zadd", run, spawned);
    assert_eq!(out.status.code(), Some(1), "{}", out.describe());
    one_line_naming(&out, &dir);
    let stdout = out.stdout_text();
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("Total Issued commands")),
        "no summary: {}",
        out.describe()
    );
    assert!(!Path::new(&json).exists(), "{json}");
}

/// redis-benchmark: its test block on stdout, then `--json-out-file` refused; exit 1.
#[test]
fn redis_benchmark_results_are_printed_when_the_directory_turns_read_only() {
    let Some(dir) = refusing_dir_or_skip(
        "redis_benchmark_results_are_printed_when_the_directory_turns_read_only",
    ) else {
        return;
    };
    let server = RedisServer::start();
    let port = server.port.to_string();
    let json = dir.file_arg("rb.json");
    let n = (100 * RUN_SECONDS).to_string();
    let spawned = Instant::now();
    let run = kvbench(&[
        "redis-benchmark",
        "-p",
        &port,
        "-t",
        "set",
        "-c",
        "1",
        "--rps",
        "100",
        "-n",
        &n,
        "-q",
        "--json-out-file",
        &json,
    ])
    .spawn();
    let out = read_only_mid_run(&dir, &server, "set", run, spawned);
    assert_eq!(out.status.code(), Some(1), "{}", out.describe());
    one_line_naming(&out, &dir);
    assert!(
        out.stdout_text().contains("SET: "),
        "no result line: {}",
        out.describe()
    );
    assert!(!Path::new(&json).exists(), "{json}");
}

/// latency: its window's figures on stdout, then `--hdr-file` refused; exit 1.
#[test]
fn latency_figures_are_printed_when_the_directory_turns_read_only() {
    let Some(dir) =
        refusing_dir_or_skip("latency_figures_are_printed_when_the_directory_turns_read_only")
    else {
        return;
    };
    let server = RedisServer::start();
    let port = server.port.to_string();
    let hdr = dir.file_arg("latency.txt");
    let window = RUN_SECONDS.to_string();
    let spawned = Instant::now();
    let run = kvbench(&[
        "latency",
        "-p",
        &port,
        "--json",
        "-i",
        &window,
        "--hdr-file",
        &hdr,
    ])
    .spawn();
    let out = read_only_mid_run(&dir, &server, "ping", run, spawned);
    assert_eq!(out.status.code(), Some(1), "{}", out.describe());
    one_line_naming(&out, &dir);
    let stdout = out.stdout_text();
    let figures: serde_json::Value =
        serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {}", out.describe()));
    assert!(
        figures["count"].as_u64().is_some_and(|c| c > 0),
        "{figures}"
    );
    assert!(!Path::new(&hdr).exists(), "{hdr}");
}
