//! Integration-test harness: throwaway redis-server and memcached on free ports, and a
//! way to run the built `kvbench` binary with a hard timeout.
//!
//! Every server is started on 127.0.0.1 only, on a port the OS handed out, in its own
//! temporary directory; `Drop` kills it by its PID and removes the directory, so a
//! failing test leaves nothing behind. Each `tests/*.rs` file uses a subset of this.

#![allow(dead_code)]

use std::collections::{HashMap, HashSet};
use std::fs::{self, File};
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

/// How long a server may take to answer its first request.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(10);
/// How many fresh ports a server start tries before giving up (another process may take
/// the port between `free_port` and the server's own bind).
const START_ATTEMPTS: usize = 5;
/// Default hard limit for one `kvbench` run in a test.
pub const KVBENCH_TIMEOUT: Duration = Duration::from_secs(120);

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

/// A throwaway `redis-server` on 127.0.0.1, no persistence, in its own temp dir.
pub struct RedisServer {
    pub port: u16,
    child: Child,
    dir: PathBuf,
    /// Set when started with `--requirepass`, so `cli` can authenticate.
    password: Option<String>,
}

impl RedisServer {
    /// Start a server with the default throwaway configuration.
    pub fn start() -> Self {
        Self::start_with(&[])
    }

    /// Start a server with extra `redis-server` arguments, e.g.
    /// `&["--requirepass", "secret"]`.
    pub fn start_with(args: &[&str]) -> Self {
        let password = args
            .iter()
            .position(|a| *a == "--requirepass")
            .and_then(|i| args.get(i + 1))
            .map(|p| p.to_string());
        let mut last_log = String::new();
        for _ in 0..START_ATTEMPTS {
            let port = free_port();
            let dir = temp_dir("redis");
            let log = dir.join("redis.log");
            let log_file = File::create(&log).expect("create redis.log");
            let mut cmd = Command::new("redis-server");
            cmd.args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
                .args(["--save", "", "--appendonly", "no"])
                .arg("--dir")
                .arg(&dir)
                .args(args)
                .stdin(Stdio::null())
                .stdout(Stdio::from(log_file.try_clone().expect("clone log handle")))
                .stderr(Stdio::from(log_file));
            let child = spawn_or_explain(&mut cmd, "redis-server");
            let mut server = RedisServer {
                port,
                child,
                dir,
                password: password.clone(),
            };
            match server.wait_ready() {
                Ok(()) => return server,
                Err(why) => {
                    last_log = format!("{why}\n--- redis.log ---\n{}", log_tail(&log, 20));
                    // Drop kills the child and removes the dir before the next attempt.
                }
            }
        }
        panic!("redis-server did not start after {START_ATTEMPTS} attempts: {last_log}");
    }

    /// Poll `PING` until it answers or the server exits or the timeout passes.
    fn wait_ready(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + STARTUP_TIMEOUT;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!(
                    "redis-server on port {} exited: {status}",
                    self.port
                ));
            }
            if let Ok(out) = self.cli_output(&["PING"]) {
                let text = String::from_utf8_lossy(&out.stdout);
                // NOAUTH also proves the server is up: it answered.
                if text.trim() == "PONG" || text.contains("NOAUTH") {
                    return Ok(());
                }
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "redis-server on port {} did not answer PING within {:?}",
                    self.port, STARTUP_TIMEOUT
                ));
            }
            thread::sleep(Duration::from_millis(50));
        }
    }

    fn cli_output(&self, args: &[&str]) -> std::io::Result<Output> {
        let mut cmd = Command::new("redis-cli");
        cmd.args(["-h", "127.0.0.1", "-p", &self.port.to_string()]);
        if let Some(pw) = &self.password {
            cmd.args(["-a", pw, "--no-auth-warning"]);
        }
        cmd.args(args).stdin(Stdio::null());
        match cmd.output() {
            Err(e) if e.kind() == ErrorKind::NotFound => {
                panic!("redis-cli not found: run `make test`, which installs it")
            }
            other => other,
        }
    }

    /// `host:port` of this server, for messages.
    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// The server's data directory (its log is `redis.log` there).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Run `redis-cli -p PORT ARGS...` and return its stdout, trimmed. Panics if
    /// redis-cli itself fails; a Redis error reply comes back as text (`ERR ...`).
    pub fn cli(&self, args: &[&str]) -> String {
        let out = self
            .cli_output(args)
            .unwrap_or_else(|e| panic!("redis-cli {args:?}: {e}"));
        assert!(
            out.status.success(),
            "redis-cli {args:?} on port {} failed ({}): {}",
            self.port,
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Number of keys in the current database.
    pub fn dbsize(&self) -> u64 {
        let text = self.cli(&["DBSIZE"]);
        text.parse()
            .unwrap_or_else(|_| panic!("DBSIZE answered {text:?}, not a number"))
    }

    /// Calls per command since start or the last `CONFIG RESETSTAT`, from
    /// `INFO commandstats`: `cmdstat_set:calls=10000,...` becomes `"set" -> 10000`.
    /// Subcommands keep Redis's spelling (`"config|resetstat"`).
    pub fn commandstats(&self) -> HashMap<String, u64> {
        parse_commandstats(&self.cli(&["INFO", "commandstats"]))
    }

    /// Remove every key.
    pub fn flushall(&self) {
        let reply = self.cli(&["FLUSHALL"]);
        assert_eq!(reply, "OK", "FLUSHALL answered {reply:?}");
    }

    /// Zero the command statistics (`INFO commandstats`).
    pub fn config_resetstat(&self) {
        let reply = self.cli(&["CONFIG", "RESETSTAT"]);
        assert_eq!(reply, "OK", "CONFIG RESETSTAT answered {reply:?}");
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        kill_and_wait(&mut self.child);
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// Parse `INFO commandstats` text into command name -> calls.
pub fn parse_commandstats(info: &str) -> HashMap<String, u64> {
    let mut map = HashMap::new();
    for line in info.lines() {
        let Some(rest) = line.trim().strip_prefix("cmdstat_") else {
            continue;
        };
        let Some((name, fields)) = rest.split_once(':') else {
            continue;
        };
        let calls = fields
            .split(',')
            .find_map(|f| f.strip_prefix("calls="))
            .and_then(|v| v.parse().ok());
        if let Some(calls) = calls {
            map.insert(name.to_string(), calls);
        }
    }
    map
}

/// A throwaway `memcached` on 127.0.0.1 (TCP only, 256 MB, 2 threads).
pub struct Memcached {
    pub port: u16,
    child: Child,
    dir: PathBuf,
}

impl Memcached {
    /// Start with the default throwaway configuration.
    pub fn start() -> Self {
        Self::start_with(&[])
    }

    /// Start with extra `memcached` arguments.
    pub fn start_with(args: &[&str]) -> Self {
        let mut last_log = String::new();
        for _ in 0..START_ATTEMPTS {
            let port = free_port();
            let dir = temp_dir("memcached");
            let log = dir.join("memcached.log");
            let log_file = File::create(&log).expect("create memcached.log");
            let mut cmd = Command::new("memcached");
            cmd.args(["-p", &port.to_string(), "-l", "127.0.0.1", "-U", "0"])
                .args(["-m", "256", "-t", "2"]);
            // memcached refuses to run as root unless told which user to be.
            if is_root() {
                cmd.args(["-u", "root"]);
            }
            cmd.args(args)
                .current_dir(&dir)
                .stdin(Stdio::null())
                .stdout(Stdio::from(log_file.try_clone().expect("clone log handle")))
                .stderr(Stdio::from(log_file));
            let child = spawn_or_explain(&mut cmd, "memcached");
            let mut server = Memcached { port, child, dir };
            match server.wait_ready() {
                Ok(()) => return server,
                Err(why) => {
                    last_log = format!("{why}\n--- memcached.log ---\n{}", log_tail(&log, 20));
                }
            }
        }
        panic!("memcached did not start after {START_ATTEMPTS} attempts: {last_log}");
    }

    fn wait_ready(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + STARTUP_TIMEOUT;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("memcached on port {} exited: {status}", self.port));
            }
            if self.request("stats\r\n", b"END\r\n").is_ok() {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "memcached on port {} did not answer `stats` within {:?}",
                    self.port, STARTUP_TIMEOUT
                ));
            }
            thread::sleep(Duration::from_millis(50));
        }
    }

    /// Send one text-protocol request and read until the reply ends with `terminator`.
    fn request(&self, req: &str, terminator: &[u8]) -> std::io::Result<String> {
        let addr: SocketAddr = ([127, 0, 0, 1], self.port).into();
        let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
        stream.set_read_timeout(Some(Duration::from_secs(5)))?;
        stream.write_all(req.as_bytes())?;
        let mut reply = Vec::new();
        let mut buf = [0u8; 4096];
        while !reply.ends_with(terminator) {
            let n = stream.read(&mut buf)?;
            if n == 0 {
                return Err(std::io::Error::new(
                    ErrorKind::UnexpectedEof,
                    "memcached closed the connection mid-reply",
                ));
            }
            reply.extend_from_slice(&buf[..n]);
        }
        let _ = stream.shutdown(Shutdown::Both);
        Ok(String::from_utf8_lossy(&reply).into_owned())
    }

    /// `host:port` of this server, for messages.
    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Every `STAT name value` line of `stats`, as text (versions, rusage floats, ...).
    pub fn stats_raw(&self) -> HashMap<String, String> {
        let reply = self
            .request("stats\r\n", b"END\r\n")
            .unwrap_or_else(|e| panic!("memcached stats on port {}: {e}", self.port));
        reply
            .lines()
            .filter_map(|l| l.trim().strip_prefix("STAT "))
            .filter_map(|l| l.split_once(' '))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// The integer counters of `stats` (`cmd_get`, `cmd_set`, `get_hits`, `curr_items`, ...).
    pub fn stats(&self) -> HashMap<String, u64> {
        self.stats_raw()
            .into_iter()
            .filter_map(|(k, v)| v.parse().ok().map(|v| (k, v)))
            .collect()
    }

    /// Drop every item.
    pub fn flush_all(&self) {
        let reply = self
            .request("flush_all\r\n", b"\r\n")
            .unwrap_or_else(|e| panic!("memcached flush_all on port {}: {e}", self.port));
        assert_eq!(reply.trim(), "OK", "flush_all answered {reply:?}");
    }
}

impl Drop for Memcached {
    fn drop(&mut self) {
        kill_and_wait(&mut self.child);
        let _ = fs::remove_dir_all(&self.dir);
    }
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// A `Command` for the `kvbench` binary cargo built for these tests.
pub fn kvbench() -> Command {
    Command::new(env!("CARGO_BIN_EXE_kvbench"))
}

/// Run `kvbench ARGS...` with a 120 s hard limit; see [`run_with_timeout`].
pub fn run_kvbench(args: &[&str]) -> Output {
    let mut cmd = kvbench();
    cmd.args(args);
    run_with_timeout(cmd, KVBENCH_TIMEOUT)
}

/// Run `kvbench ARGS...` with a custom hard limit.
pub fn run_kvbench_timeout(args: &[&str], timeout: Duration) -> Output {
    let mut cmd = kvbench();
    cmd.args(args);
    run_with_timeout(cmd, timeout)
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
    let deadline = Instant::now() + timeout;
    let status: ExitStatus = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() >= deadline => {
                kill_and_wait(&mut child);
                let out = stdout.join().unwrap_or_default();
                let err = stderr.join().unwrap_or_default();
                panic!(
                    "timed out after {timeout:?}, killed: {desc}\n--- stdout ---\n{}\n--- stderr ---\n{}",
                    String::from_utf8_lossy(&out),
                    String::from_utf8_lossy(&err)
                );
            }
            Ok(None) => thread::sleep(Duration::from_millis(10)),
            Err(e) => panic!("waiting for {desc}: {e}"),
        }
    };
    Output {
        status,
        stdout: stdout.join().expect("stdout reader thread"),
        stderr: stderr.join().expect("stderr reader thread"),
    }
}

fn drain<R: Read + Send + 'static>(mut pipe: R) -> thread::JoinHandle<Vec<u8>> {
    thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = pipe.read_to_end(&mut buf);
        buf
    })
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

impl RedisServer {
    /// Kill the server now (SIGKILL to its PID, then reap it), as a crash would; `Drop`
    /// later only removes the directory. For tests of a server dying mid-run.
    pub fn kill_now(&mut self) {
        kill_and_wait(&mut self.child);
    }
}

/// A `kvbench` running in the background, for tests that act while it runs (signal it,
/// kill its server). Its stdout and stderr are drained on their own threads; dropping it
/// without [`Background::wait`] kills it.
pub struct Background {
    child: Child,
    desc: String,
    stdout: Option<thread::JoinHandle<Vec<u8>>>,
    stderr: Option<thread::JoinHandle<Vec<u8>>>,
}

/// Start `kvbench ARGS...` in the background with stdout and stderr captured.
pub fn spawn_kvbench(args: &[&str]) -> Background {
    let mut cmd = kvbench();
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let desc = format!("{cmd:?}");
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {desc}: {e}"));
    let stdout = Some(drain(child.stdout.take().expect("stdout is piped")));
    let stderr = Some(drain(child.stderr.take().expect("stderr is piped")));
    Background {
        child,
        desc,
        stdout,
        stderr,
    }
}

impl Background {
    /// The child's PID (it is not reaped before [`Background::wait`], so the PID is its own).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Wait for it to exit; if it outlives `timeout` it is killed and the test panics with
    /// what it printed, as [`run_with_timeout`] does.
    pub fn wait(mut self, timeout: Duration) -> Output {
        let deadline = Instant::now() + timeout;
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() >= deadline => {
                    kill_and_wait(&mut self.child);
                    let (out, err) = self.take_output();
                    panic!(
                        "timed out after {timeout:?}, killed: {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
                        self.desc,
                        String::from_utf8_lossy(&out),
                        String::from_utf8_lossy(&err)
                    );
                }
                Ok(None) => thread::sleep(Duration::from_millis(10)),
                Err(e) => panic!("waiting for {}: {e}", self.desc),
            }
        };
        let (stdout, stderr) = self.take_output();
        Output {
            status,
            stdout,
            stderr,
        }
    }

    fn take_output(&mut self) -> (Vec<u8>, Vec<u8>) {
        let join = |h: Option<thread::JoinHandle<Vec<u8>>>| {
            h.map(|h| h.join().unwrap_or_default()).unwrap_or_default()
        };
        (join(self.stdout.take()), join(self.stderr.take()))
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        // Kills only a child still running (after `wait` it is reaped and this is a no-op).
        kill_and_wait(&mut self.child);
    }
}

// ---------------------------------------------------------------------------------------
// Helpers for the end-to-end feature tests (`redis_commands`, `data_verify`,
// `outputs_e2e`): a scratch directory, JSON reading, and binary-safe memcached access.

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

impl Memcached {
    /// Send raw bytes on a fresh connection and read until the reply ends with
    /// `terminator`. Binary safe (values may hold any byte).
    pub fn raw(&self, req: &[u8], terminator: &[u8]) -> Vec<u8> {
        let addr: SocketAddr = ([127, 0, 0, 1], self.port).into();
        let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2))
            .unwrap_or_else(|e| panic!("connect to memcached {}: {e}", self.addr()));
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .expect("set read timeout");
        stream.write_all(req).expect("send to memcached");
        let mut reply = Vec::new();
        let mut buf = [0u8; 64 * 1024];
        while !reply.ends_with(terminator) {
            let n = stream
                .read(&mut buf)
                .unwrap_or_else(|e| panic!("read from memcached {}: {e}", self.addr()));
            assert!(
                n > 0,
                "memcached closed the connection mid-reply: {:?}",
                String::from_utf8_lossy(&reply)
            );
            reply.extend_from_slice(&buf[..n]);
        }
        reply
    }

    /// `get KEY` over the text protocol: the value's bytes, or `None` on a miss. Reads
    /// exactly the advertised length, so a value holding `\r\nEND\r\n` comes back whole.
    pub fn get(&self, key: &str) -> Option<Vec<u8>> {
        let addr: SocketAddr = ([127, 0, 0, 1], self.port).into();
        let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2))
            .unwrap_or_else(|e| panic!("connect to memcached {}: {e}", self.addr()));
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .expect("set read timeout");
        stream
            .write_all(format!("get {key}\r\n").as_bytes())
            .expect("send get");
        let mut buf = Vec::new();
        let mut chunk = [0u8; 64 * 1024];
        let mut read_more = |buf: &mut Vec<u8>| {
            let n = stream.read(&mut chunk).expect("read get reply");
            assert!(n > 0, "memcached closed the connection mid-reply");
            buf.extend_from_slice(&chunk[..n]);
        };
        let header_end = loop {
            if let Some(i) = buf.windows(2).position(|w| w == b"\r\n") {
                break i;
            }
            read_more(&mut buf);
        };
        let header = String::from_utf8_lossy(&buf[..header_end]).into_owned();
        if header == "END" {
            return None;
        }
        let fields: Vec<&str> = header.split(' ').collect();
        assert!(
            fields.len() == 4 && fields[0] == "VALUE" && fields[1] == key,
            "unexpected get header {header:?}"
        );
        let len: usize = fields[3]
            .parse()
            .unwrap_or_else(|_| panic!("bad length in {header:?}"));
        let start = header_end + 2;
        let total = start + len + b"\r\nEND\r\n".len();
        while buf.len() < total {
            read_more(&mut buf);
        }
        assert_eq!(
            &buf[start + len..total],
            b"\r\nEND\r\n",
            "value of {key} is not followed by END"
        );
        Some(buf[start..start + len].to_vec())
    }

    /// `set KEY 0 EXPTIME <len>` + value over the text protocol; panics unless `STORED`.
    pub fn set(&self, key: &str, value: &[u8], exptime: u32) {
        let mut req = format!("set {key} 0 {exptime} {}\r\n", value.len()).into_bytes();
        req.extend_from_slice(value);
        req.extend_from_slice(b"\r\n");
        let reply = self.raw(&req, b"\r\n");
        assert_eq!(
            reply,
            b"STORED\r\n",
            "memcached set {key} answered {:?}",
            String::from_utf8_lossy(&reply)
        );
    }

    /// The remaining TTL of KEY in seconds via the meta command `mg KEY t`: `Some(-1)` for
    /// an item that never expires, `None` when the key is missing.
    pub fn ttl(&self, key: &str) -> Option<i64> {
        let reply = self.raw(format!("mg {key} t\r\n").as_bytes(), b"\r\n");
        let text = String::from_utf8_lossy(&reply);
        let text = text.trim();
        if text == "EN" {
            return None;
        }
        let ttl = text
            .strip_prefix("HD ")
            .and_then(|rest| rest.split(' ').find_map(|f| f.strip_prefix('t')))
            .unwrap_or_else(|| panic!("mg {key} t answered {text:?}"));
        Some(
            ttl.parse()
                .unwrap_or_else(|_| panic!("mg {key} t answered {text:?}")),
        )
    }
}

// ---------------------------------------------------------------------------------------
// TLS: certificates made at run time, and TLS-only servers.

/// The `openssl` config the test PKI is made with, so the result does not depend on the
/// system's `openssl.cnf`. Sections name the certificate profiles.
const PKI_OPENSSL_CNF: &str = "\
[req]
distinguished_name = dn
prompt = no
[dn]
CN = kvbench-test
[ca]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
[server]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost,IP:127.0.0.1
[named]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = DNS:kvbench.test
[client]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = clientAuth
";

/// A throwaway PKI made with the `openssl` CLI when a test starts (no key is ever
/// committed): a CA, certificates it signed, and a second, unrelated CA. EC P-256 keys, so
/// generating them takes milliseconds. `Drop` removes the directory.
pub struct TestPki {
    dir: PathBuf,
}

impl TestPki {
    /// Generate every file; panics with the openssl output if a step fails.
    pub fn generate() -> Self {
        let dir = temp_dir("pki");
        let pki = TestPki { dir };
        fs::write(pki.path("openssl.cnf"), PKI_OPENSSL_CNF).expect("write openssl.cnf");
        pki.self_signed_ca("ca", "kvbench-test-ca");
        pki.self_signed_ca("other-ca", "kvbench-other-ca");
        pki.issue("server", "localhost", "server", &["-days", "2"]);
        pki.issue("named", "kvbench.test", "named", &["-days", "2"]);
        pki.issue("client", "kvbench-client", "client", &["-days", "2"]);
        // A certificate whose notAfter is already past. `-days -1` works with the OpenSSL
        // 3.0 of Debian 12; newer releases take explicit dates instead.
        if !pki.try_issue("expired", "localhost", "server", &["-days", "-1"]) {
            pki.issue(
                "expired",
                "localhost",
                "server",
                &[
                    "-not_before",
                    "20200101000000Z",
                    "-not_after",
                    "20200102000000Z",
                ],
            );
        }
        // The client key again, encrypted, for the "encrypted key" refusal.
        pki.openssl(&[
            "pkey",
            "-in",
            &pki.file("client.key"),
            "-aes256",
            "-passout",
            "pass:secret",
            "-out",
            &pki.file("client-encrypted.key"),
        ]);
        pki
    }

    /// The directory holding the files.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `DIR/name` as a path.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// `DIR/name` as a string, for command lines. Files: `ca.pem`, `other-ca.pem`,
    /// `server.pem`/`.key` (localhost, 127.0.0.1), `named.pem`/`.key` (kvbench.test only),
    /// `client.pem`/`.key`, `expired.pem`/`.key`, `client-encrypted.key`.
    pub fn file(&self, name: &str) -> String {
        self.path(name).to_string_lossy().into_owned()
    }

    fn self_signed_ca(&self, name: &str, cn: &str) {
        self.openssl(&[
            "req",
            "-x509",
            "-config",
            &self.file("openssl.cnf"),
            "-extensions",
            "ca",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            &self.file(&format!("{name}.key")),
            "-out",
            &self.file(&format!("{name}.pem")),
            "-days",
            "2",
            "-subj",
            &format!("/CN={cn}"),
        ]);
    }

    fn issue(&self, name: &str, cn: &str, profile: &str, validity: &[&str]) {
        assert!(
            self.try_issue(name, cn, profile, validity),
            "openssl could not issue {name}.pem; see the output above"
        );
    }

    /// A key and a certificate signed by `ca`, with the extensions of `profile`.
    fn try_issue(&self, name: &str, cn: &str, profile: &str, validity: &[&str]) -> bool {
        let csr = self.file(&format!("{name}.csr"));
        self.openssl(&[
            "req",
            "-new",
            "-config",
            &self.file("openssl.cnf"),
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            &self.file(&format!("{name}.key")),
            "-out",
            &csr,
            "-subj",
            &format!("/CN={cn}"),
        ]);
        // Serial numbers must differ per certificate: derive one from the name.
        let serial = name.bytes().fold(7u32, |acc, b| {
            acc.wrapping_mul(31).wrapping_add(u32::from(b))
        }) % 1_000_000
            + 1;
        let mut args = vec![
            "x509".to_string(),
            "-req".to_string(),
            "-in".to_string(),
            csr,
            "-CA".to_string(),
            self.file("ca.pem"),
            "-CAkey".to_string(),
            self.file("ca.key"),
            "-set_serial".to_string(),
            serial.to_string(),
            "-extfile".to_string(),
            self.file("openssl.cnf"),
            "-extensions".to_string(),
            profile.to_string(),
            "-out".to_string(),
            self.file(&format!("{name}.pem")),
        ];
        args.extend(validity.iter().map(|s| s.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        self.openssl_status(&args)
    }

    fn openssl(&self, args: &[&str]) {
        assert!(
            self.openssl_status(args),
            "openssl {args:?} failed; see the output above"
        );
    }

    fn openssl_status(&self, args: &[&str]) -> bool {
        let mut cmd = Command::new("openssl");
        cmd.args(args).current_dir(&self.dir).stdin(Stdio::null());
        let out = match cmd.output() {
            Ok(out) => out,
            Err(e) if e.kind() == ErrorKind::NotFound => {
                panic!("openssl not found: run `make test`, which installs it")
            }
            Err(e) => panic!("cannot run openssl: {e}"),
        };
        if !out.status.success() {
            eprintln!(
                "openssl {args:?} failed ({}):\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
        }
        out.status.success()
    }
}

impl Drop for TestPki {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// A throwaway `redis-server` that speaks only TLS (`--port 0 --tls-port P`), on
/// 127.0.0.1, with the test PKI's `server` certificate unless told otherwise. Its own
/// `redis-cli --tls` calls present the client certificate, so they work when the server
/// requires one.
pub struct TlsRedisServer {
    pub port: u16,
    child: Child,
    dir: PathBuf,
    ca: String,
    client_cert: String,
    client_key: String,
}

impl TlsRedisServer {
    /// `cert` is the base name of the server's certificate and key in `pki` (`server`,
    /// `named`, `expired`); `args` are extra `redis-server` arguments such as
    /// `["--tls-auth-clients", "yes"]` or `["--tls-protocols", "TLSv1.3"]`.
    pub fn start(pki: &TestPki, cert: &str, args: &[&str]) -> Self {
        let mut last_log = String::new();
        for _ in 0..START_ATTEMPTS {
            let port = free_port();
            let dir = temp_dir("redis-tls");
            let log = dir.join("redis.log");
            let log_file = File::create(&log).expect("create redis.log");
            let mut cmd = Command::new("redis-server");
            cmd.args(["--port", "0", "--tls-port", &port.to_string()])
                .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
                .arg("--tls-cert-file")
                .arg(pki.path(&format!("{cert}.pem")))
                .arg("--tls-key-file")
                .arg(pki.path(&format!("{cert}.key")))
                .arg("--tls-ca-cert-file")
                .arg(pki.path("ca.pem"))
                .arg("--dir")
                .arg(&dir)
                .args(args)
                .stdin(Stdio::null())
                .stdout(Stdio::from(log_file.try_clone().expect("clone log handle")))
                .stderr(Stdio::from(log_file));
            let child = spawn_or_explain(&mut cmd, "redis-server");
            let mut server = TlsRedisServer {
                port,
                child,
                dir,
                ca: pki.file("ca.pem"),
                client_cert: pki.file("client.pem"),
                client_key: pki.file("client.key"),
            };
            match server.wait_ready() {
                Ok(()) => return server,
                Err(why) => {
                    last_log = format!("{why}\n--- redis.log ---\n{}", log_tail(&log, 20));
                }
            }
        }
        panic!("redis-server (TLS) did not start after {START_ATTEMPTS} attempts: {last_log}");
    }

    fn wait_ready(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + STARTUP_TIMEOUT;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!(
                    "redis-server on TLS port {} exited: {status}",
                    self.port
                ));
            }
            if let Ok(out) = self.cli_output(&["PING"]) {
                let text = String::from_utf8_lossy(&out.stdout);
                // NOAUTH also proves the server is up: it answered.
                if text.trim() == "PONG" || text.contains("NOAUTH") {
                    return Ok(());
                }
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "redis-server on TLS port {} did not answer PING within {:?}",
                    self.port, STARTUP_TIMEOUT
                ));
            }
            thread::sleep(Duration::from_millis(50));
        }
    }

    fn cli_output(&self, args: &[&str]) -> std::io::Result<Output> {
        let mut cmd = Command::new("redis-cli");
        // --insecure: the harness talks to its own server, whose certificate may be expired
        // or name another host on purpose.
        cmd.args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "--tls"])
            .args(["--insecure", "--cacert", &self.ca])
            .args(["--cert", &self.client_cert, "--key", &self.client_key])
            .args(args)
            .stdin(Stdio::null());
        match cmd.output() {
            Err(e) if e.kind() == ErrorKind::NotFound => {
                panic!("redis-cli not found: run `make test`, which installs it")
            }
            other => other,
        }
    }

    /// `host:port` of this server, for messages.
    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// The server's data directory (its log is `redis.log` there).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `redis-cli --tls ... ARGS` stdout, trimmed; panics if redis-cli fails.
    pub fn cli(&self, args: &[&str]) -> String {
        let out = self
            .cli_output(args)
            .unwrap_or_else(|e| panic!("redis-cli {args:?}: {e}"));
        assert!(
            out.status.success(),
            "redis-cli --tls {args:?} on port {} failed ({}): {}",
            self.port,
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Calls per command from `INFO commandstats`, as [`RedisServer::commandstats`].
    pub fn commandstats(&self) -> HashMap<String, u64> {
        parse_commandstats(&self.cli(&["INFO", "commandstats"]))
    }

    /// Zero the command statistics.
    pub fn config_resetstat(&self) {
        let reply = self.cli(&["CONFIG", "RESETSTAT"]);
        assert_eq!(reply, "OK", "CONFIG RESETSTAT answered {reply:?}");
    }
}

impl Drop for TlsRedisServer {
    fn drop(&mut self) {
        kill_and_wait(&mut self.child);
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// A throwaway `memcached -Z` on 127.0.0.1: TLS on `port`, and a plaintext listener
/// (`-l notls:...`) on `plain_port` for reading `stats` without a TLS client.
pub struct TlsMemcached {
    pub port: u16,
    pub plain_port: u16,
    child: Child,
    dir: PathBuf,
}

impl TlsMemcached {
    /// `extra_ssl` is appended to the `-o` list, e.g. `"ssl_verify_mode=2,ssl_ca_cert=..."`.
    pub fn start(pki: &TestPki, extra_ssl: &str) -> Self {
        let mut last_log = String::new();
        for _ in 0..START_ATTEMPTS {
            let (port, plain_port) = (free_port(), free_port());
            let dir = temp_dir("memcached-tls");
            let log = dir.join("memcached.log");
            let log_file = File::create(&log).expect("create memcached.log");
            let mut ssl = format!(
                "ssl_chain_cert={},ssl_key={}",
                pki.file("server.pem"),
                pki.file("server.key")
            );
            if !extra_ssl.is_empty() {
                ssl.push(',');
                ssl.push_str(extra_ssl);
            }
            let mut cmd = Command::new("memcached");
            cmd.args(["-Z", "-o", &ssl])
                .args(["-p", &port.to_string(), "-l", "127.0.0.1"])
                .args(["-l", &format!("notls:127.0.0.1:{plain_port}")])
                .args(["-U", "0", "-m", "256", "-t", "2"]);
            if is_root() {
                cmd.args(["-u", "root"]);
            }
            cmd.current_dir(&dir)
                .stdin(Stdio::null())
                .stdout(Stdio::from(log_file.try_clone().expect("clone log handle")))
                .stderr(Stdio::from(log_file));
            let child = spawn_or_explain(&mut cmd, "memcached");
            let mut server = TlsMemcached {
                port,
                plain_port,
                child,
                dir,
            };
            match server.wait_ready() {
                Ok(()) => return server,
                Err(why) => {
                    last_log = format!("{why}\n--- memcached.log ---\n{}", log_tail(&log, 20));
                }
            }
        }
        panic!("memcached -Z did not start after {START_ATTEMPTS} attempts: {last_log}");
    }

    fn wait_ready(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + STARTUP_TIMEOUT;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!(
                    "memcached -Z on port {} exited: {status}",
                    self.port
                ));
            }
            let tls_listening = TcpStream::connect_timeout(
                &SocketAddr::from(([127, 0, 0, 1], self.port)),
                Duration::from_millis(200),
            )
            .is_ok();
            if tls_listening && self.plain_request("stats\r\n", b"END\r\n").is_ok() {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "memcached -Z on ports {}/{} did not come up within {:?}",
                    self.port, self.plain_port, STARTUP_TIMEOUT
                ));
            }
            thread::sleep(Duration::from_millis(50));
        }
    }

    /// One text request on the plaintext listener, read until `terminator`.
    fn plain_request(&self, req: &str, terminator: &[u8]) -> std::io::Result<String> {
        let addr: SocketAddr = ([127, 0, 0, 1], self.plain_port).into();
        let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
        stream.set_read_timeout(Some(Duration::from_secs(5)))?;
        stream.write_all(req.as_bytes())?;
        let mut reply = Vec::new();
        let mut buf = [0u8; 4096];
        while !reply.ends_with(terminator) {
            let n = stream.read(&mut buf)?;
            if n == 0 {
                return Err(std::io::Error::new(
                    ErrorKind::UnexpectedEof,
                    "memcached closed the connection mid-reply",
                ));
            }
            reply.extend_from_slice(&buf[..n]);
        }
        Ok(String::from_utf8_lossy(&reply).into_owned())
    }

    /// `host:port` of the TLS listener, for messages.
    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// The integer counters of `stats` (read over the plaintext listener; they count the
    /// TLS connections too).
    pub fn stats(&self) -> HashMap<String, u64> {
        let reply = self
            .plain_request("stats\r\n", b"END\r\n")
            .unwrap_or_else(|e| panic!("memcached stats on port {}: {e}", self.plain_port));
        reply
            .lines()
            .filter_map(|l| l.trim().strip_prefix("STAT "))
            .filter_map(|l| l.split_once(' '))
            .filter_map(|(k, v)| v.parse().ok().map(|v| (k.to_string(), v)))
            .collect()
    }
}

impl Drop for TlsMemcached {
    fn drop(&mut self) {
        kill_and_wait(&mut self.child);
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// A TCP server on 127.0.0.1 that accepts connections, reads what arrives and never
/// answers (a stalled server, or one stuck before a handshake reply). Returns its port;
/// the listener lives on a detached thread until the test process ends.
pub fn silent_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    let port = listener.local_addr().expect("bound address").port();
    thread::spawn(move || {
        let mut held = Vec::new();
        for mut stream in listener.incoming().flatten() {
            let mut buf = [0u8; 1024];
            let _ = stream.read(&mut buf);
            held.push(stream);
        }
    });
    port
}
