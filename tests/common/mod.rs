//! Integration-test harness: throwaway servers on free ports ([`server`]) and a
//! three-master Redis Cluster of them ([`cluster`]), a fake Redis
//! that records requests ([`recorder`]), a test PKI ([`pki`]), python hdrh as an
//! independent histogram reader ([`python`]), the built `kvbench` run
//! with a hard timeout ([`run`]), headless Chromium ([`browser`]), a port whose connects
//! never complete ([`SynDroppingPort`]), and the small tools tests share (scratch
//! directories, JSON reading, waiting for a condition).
//!
//! Every server is started on 127.0.0.1 only, on a port the OS handed out, in its own
//! temporary directory; `Drop` kills it by its PID and removes the directory, so a
//! failing test leaves nothing behind. Tests wait for conditions, never for a fixed time:
//! [`wait_until`] polls with a generous deadline. Each `tests/*.rs` file uses a subset.

#![allow(dead_code, unused_imports)]

pub mod browser;
pub mod cluster;
mod pki;
pub mod python;
mod recorder;
mod run;
mod server;

pub use cluster::RedisCluster;
pub use pki::TestPki;
pub use recorder::{Recorder, first_word, next_request};
pub use run::{KVBENCH_TIMEOUT, Kvbench, Run, kvbench, kvbench_at, kvbench_command, run_ok};
pub use server::{Memcached, RedisServer, parse_commandstats, silent_server};

use std::collections::HashSet;
use std::fs;
use std::io::{ErrorKind, Read};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// How long a server may take to answer its first request: generous, since a loaded
/// 2-core machine (parallel tests, other builds) can keep a fresh server from running for
/// seconds; a server that starts well answers in milliseconds, so only a broken start waits.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);
/// How many fresh ports a server start tries before giving up (another process may take
/// the port between `free_port` and the server's own bind).
const START_ATTEMPTS: usize = 5;
/// How long [`wait_until`] waits by default: a loaded 2-core machine can be slow, and a
/// condition that holds ends the wait at once, so only a failing test pays for the length.
pub const CONDITION_TIMEOUT: Duration = Duration::from_secs(60);

/// Ports already handed out by this test process: the OS may offer the same ephemeral
/// port twice once the probing listener is closed, and parallel tests must not share one.
static HANDED_OUT: Mutex<Option<HashSet<u16>>> = Mutex::new(None);
static DIR_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A TCP port on 127.0.0.1 that nothing listened on a moment ago, never the same one
/// twice in one test process. Servers started with it retry on a new port if they lose
/// the race for it.
pub fn free_port() -> u16 {
    for _ in 0..100 {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let port = listener
            .local_addr()
            .expect("local_addr of a bound socket")
            .port();
        drop(listener);
        let mut guard = HANDED_OUT.lock().unwrap_or_else(|e| e.into_inner());
        if guard.get_or_insert_with(HashSet::new).insert(port) {
            return port;
        }
    }
    panic!("free_port: the OS kept offering ports this test process already used");
}

/// A port on 127.0.0.1 where nothing listens, for tests of connection errors.
pub fn closed_port() -> u16 {
    for _ in 0..20 {
        let port = free_port();
        let addr: SocketAddr = ([127, 0, 0, 1], port).into();
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
            return port;
        }
    }
    panic!("closed_port: every free port tried was accepting connections");
}

/// A port on 127.0.0.1 whose connects never complete, as behind a full listen backlog or
/// a firewall dropping SYNs: a listener with a backlog of 0 that never accepts, its queue
/// filled by connections of its own. Keep the value alive for as long as the port is used.
pub struct SynDroppingPort {
    pub port: u16,
    _listener: TcpListener,
    _filling: Vec<TcpStream>,
}

impl SynDroppingPort {
    pub fn start() -> SynDroppingPort {
        use std::os::fd::AsRawFd;
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        // SAFETY: listen(2) on a socket this test owns; again on a listening socket it
        // only sets the backlog.
        assert_eq!(
            unsafe { libc::listen(listener.as_raw_fd(), 0) },
            0,
            "listen"
        );
        let addr = listener.local_addr().expect("bound address");
        let mut filling = Vec::new();
        // Connects complete while the accept queue has room; the first that does not
        // shows it is full (a probe's timeout, not a wait for something to happen).
        for _ in 0..16 {
            match TcpStream::connect_timeout(&addr, Duration::from_millis(300)) {
                Ok(stream) => filling.push(stream),
                Err(_) => {
                    return SynDroppingPort {
                        port: addr.port(),
                        _listener: listener,
                        _filling: filling,
                    };
                }
            }
        }
        panic!("SynDroppingPort: 16 connects completed on a listener with a backlog of 0");
    }

    /// Whether a process has a connect to this port pending (a socket in SYN_SENT, state
    /// 02 in `/proc/net/tcp`).
    pub fn has_pending_connect(&self) -> bool {
        let table = fs::read_to_string("/proc/net/tcp").expect("read /proc/net/tcp");
        let remote = format!(":{:04X}", self.port);
        table.lines().skip(1).any(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            fields.len() > 3 && fields[2].ends_with(&remote) && fields[3] == "02"
        })
    }
}

/// Polls `condition` every 20 ms until it holds; panics naming `what` after `timeout`.
pub fn wait_until(what: &str, timeout: Duration, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !condition() {
        assert!(
            Instant::now() < deadline,
            "timed out after {timeout:?} waiting for {what}"
        );
        thread::sleep(Duration::from_millis(20));
    }
}

/// A fresh empty directory under the system temp dir, named after `what`.
fn temp_dir(what: &str) -> PathBuf {
    let n = DIR_COUNTER.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("kvbench-test-{what}-{}-{n}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("create {}: {e}", dir.display()));
    dir
}

/// The last `n` lines of a log file, for panic messages.
fn log_tail(path: &Path, n: usize) -> String {
    let text = fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Spawn `cmd`, turning "binary not found" into a panic that tells the reader what to do.
fn spawn_or_explain(cmd: &mut Command, program: &str) -> Child {
    match cmd.spawn() {
        Ok(child) => child,
        Err(e) if e.kind() == ErrorKind::NotFound => {
            panic!("{program} not found: run `make test`, which installs it")
        }
        Err(e) => panic!("cannot start {program}: {e}"),
    }
}

fn kill_and_wait(child: &mut Child) {
    // `Child::kill` signals exactly this child's PID (SIGKILL); waiting reaps it.
    let _ = child.kill();
    let _ = child.wait();
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Run `cmd` to completion, capturing stdout and stderr (read on their own threads so a
/// chatty child never blocks on a full pipe). If it outlives `timeout` it is killed and
/// the test panics with what it printed, so a hung test never hangs CI.
pub fn run_with_timeout(mut cmd: Command, timeout: Duration) -> Output {
    let desc = format!("{cmd:?}");
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {desc}: {e}"));
    let stdout = drain(child.stdout.take().expect("stdout is piped"));
    let stderr = drain(child.stderr.take().expect("stderr is piped"));
    let status = wait_or_kill(&mut child, &desc, timeout, &stdout, &stderr);
    Output {
        status,
        stdout: stdout.finish(),
        stderr: stderr.finish(),
    }
}

fn wait_or_kill(
    child: &mut Child,
    desc: &str,
    timeout: Duration,
    stdout: &Drained,
    stderr: &Drained,
) -> ExitStatus {
    let deadline = Instant::now() + timeout;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return status,
            Ok(None) if Instant::now() >= deadline => {
                kill_and_wait(child);
                panic!(
                    "timed out after {timeout:?}, killed: {desc}\n--- stdout ---\n{}\n--- stderr ---\n{}",
                    stdout.text(),
                    stderr.text()
                );
            }
            Ok(None) => thread::sleep(Duration::from_millis(10)),
            Err(e) => panic!("waiting for {desc}: {e}"),
        }
    }
}

/// A pipe read to its end on a thread of its own, readable while it fills.
struct Drained {
    buf: Arc<Mutex<Vec<u8>>>,
    reader: Option<thread::JoinHandle<()>>,
}

fn drain<R: Read + Send + 'static>(mut pipe: R) -> Drained {
    let buf = Arc::new(Mutex::new(Vec::new()));
    let shared = Arc::clone(&buf);
    let reader = thread::spawn(move || {
        let mut chunk = [0u8; 8192];
        loop {
            match pipe.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => shared
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .extend_from_slice(&chunk[..n]),
            }
        }
    });
    Drained {
        buf,
        reader: Some(reader),
    }
}

impl Drained {
    /// What arrived so far, as text.
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.buf.lock().unwrap_or_else(|e| e.into_inner())).into_owned()
    }

    /// Everything, once the writer closed the pipe.
    fn finish(mut self) -> Vec<u8> {
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
        std::mem::take(&mut *self.buf.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// Why strace cannot trace a program here (not installed, or not allowed), or `None`
/// when it can: tests that count system calls skip with the reason.
pub fn strace_unusable() -> Option<String> {
    let out = Command::new("strace")
        .args(["-f", "-o", "/dev/null", "true"])
        .output();
    match out {
        Err(e) => Some(format!("strace is not installed ({e})")),
        Ok(out) if !out.status.success() => {
            Some(format!("strace cannot trace here: {}", describe(&out)))
        }
        Ok(_) => None,
    }
}

/// Runs `program args...` under `strace -f`, tracing the system calls `calls` (strace's
/// `trace=` list), and returns the trace (in `dir`, named after `name`). Panics unless
/// the program exits 0; check [`strace_unusable`] first.
pub fn strace_trace(
    dir: &TestDir,
    name: &str,
    calls: &str,
    program: &str,
    args: &[String],
) -> String {
    let trace = dir.file_arg(&format!("{name}.strace"));
    let mut full: Vec<String> = vec![
        "-f".into(),
        "-qq".into(),
        "-e".into(),
        format!("trace={calls}"),
        "-o".into(),
        trace.clone(),
        program.into(),
    ];
    full.extend(args.iter().cloned());
    run_ok("strace", &full);
    std::fs::read_to_string(&trace).unwrap_or_else(|e| panic!("{trace}: {e}"))
}

/// Stdout and stderr of a finished run as text, for assertion messages.
pub fn describe(out: &Output) -> String {
    format!(
        "status: {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A `kvbench` running in the background, for tests that act while it runs (signal it,
/// kill its server). Its stdout and stderr are drained on their own threads and can be
/// watched while it runs; dropping it without [`Background::wait`] kills it.
pub struct Background {
    child: Child,
    desc: String,
    stdout: Option<Drained>,
    stderr: Option<Drained>,
    json: Option<(TestDir, PathBuf)>,
}

impl Background {
    fn new(
        child: Child,
        desc: String,
        stdout: Drained,
        stderr: Drained,
        json: Option<(TestDir, PathBuf)>,
    ) -> Background {
        Background {
            child,
            desc,
            stdout: Some(stdout),
            stderr: Some(stderr),
            json,
        }
    }

    /// The child's PID (it is not reaped before [`Background::wait`], so the PID is its own).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether it exits within `within`, polled (it is reaped then; [`Background::wait`]
    /// still returns its status, and its PID is no longer its own).
    pub fn exited_within(&mut self, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        loop {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// What it printed on stdout so far.
    pub fn stdout_so_far(&self) -> String {
        self.stdout.as_ref().map(Drained::text).unwrap_or_default()
    }

    /// Waits until its stdout holds `needle`.
    pub fn wait_for_stdout(&self, needle: &str) {
        wait_until(
            &format!("{needle:?} on the stdout of {}", self.desc),
            CONDITION_TIMEOUT,
            || self.stdout_so_far().contains(needle),
        );
    }

    /// What it printed on stderr so far.
    pub fn stderr_so_far(&self) -> String {
        self.stderr.as_ref().map(Drained::text).unwrap_or_default()
    }

    /// Waits until its stderr holds `needle` (e.g. `Launching threads`, printed once the
    /// signal handlers are in place and the run's clock has started).
    pub fn wait_for_stderr(&self, needle: &str) {
        wait_until(
            &format!("{needle:?} on the stderr of {}", self.desc),
            CONDITION_TIMEOUT,
            || self.stderr_so_far().contains(needle),
        );
    }

    /// Wait for it to exit; if it outlives `timeout` it is killed and the test panics with
    /// what it printed, as [`run_with_timeout`] does.
    pub fn wait(mut self, timeout: Duration) -> Run {
        let (stdout, stderr) = (
            self.stdout.take().expect("drained once"),
            self.stderr.take().expect("drained once"),
        );
        let status = wait_or_kill(&mut self.child, &self.desc, timeout, &stdout, &stderr);
        let out = Output {
            status,
            stdout: stdout.finish(),
            stderr: stderr.finish(),
        };
        Run::from_parts(out, self.json.take())
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        // Kills only a child still running (after `wait` it is reaped and this is a no-op).
        kill_and_wait(&mut self.child);
    }
}

/// A fresh empty directory for one test's files (JSON, CSV, HDR, import files),
/// removed on drop.
pub struct TestDir {
    path: PathBuf,
}

impl TestDir {
    /// A new empty directory under the system temp dir, named after `what`.
    pub fn new(what: &str) -> Self {
        TestDir {
            path: temp_dir(what),
        }
    }

    /// The directory itself.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `name` inside the directory (not created).
    pub fn file(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    /// `name` inside the directory, as a string for a command line.
    pub fn file_arg(&self, name: &str) -> String {
        self.file(name).to_string_lossy().into_owned()
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.path);
    }
}

/// Read and parse a JSON file, panicking with the text when it does not parse.
pub fn read_json(path: &Path) -> serde_json::Value {
    let text = fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("JSON file {} not written: {e}", path.display()));
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("JSON file {} does not parse: {e}\n{text}", path.display()))
}
