//! Throwaway servers on free ports of 127.0.0.1, each in its own temporary directory:
//! `redis-server` and `memcached`, plaintext or TLS-only (certificates from [`TestPki`]).
//! `Drop` kills a server by its PID and removes its directory, so a failing test leaves
//! nothing behind.

use std::collections::HashMap;
use std::fs::{self, File};
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use super::{
    START_ATTEMPTS, STARTUP_TIMEOUT, TestPki, free_port, is_root, kill_and_wait, log_tail,
    spawn_or_explain, temp_dir,
};

/// What the harness's own `redis-cli` needs to reach a TLS-only server.
struct CliTls {
    ca: String,
    cert: String,
    key: String,
}

/// A throwaway `redis-server` on 127.0.0.1, no persistence, in its own temp dir;
/// plaintext ([`RedisServer::start`]) or TLS only ([`RedisServer::start_tls`]).
pub struct RedisServer {
    pub port: u16,
    child: Child,
    dir: PathBuf,
    /// Set when started with `--requirepass`, so `cli` can authenticate.
    password: Option<String>,
    /// Set for a TLS-only server: `cli` speaks TLS with the test PKI's client certificate.
    tls: Option<CliTls>,
    /// The extra `redis-server` arguments it was started with, for [`RedisServer::restart`].
    args: Vec<String>,
}

impl RedisServer {
    /// Start a server with the default throwaway configuration.
    pub fn start() -> Self {
        Self::start_with(&[])
    }

    /// Start a server with extra `redis-server` arguments, e.g.
    /// `&["--requirepass", "secret"]`.
    pub fn start_with(args: &[&str]) -> Self {
        Self::launch(args, None)
    }

    /// A server that speaks only TLS (`--port 0 --tls-port P`), with the test PKI's `cert`
    /// (`server`, `named`, `expired`) and its CA for client certificates; `args` are extra
    /// `redis-server` arguments such as `["--tls-auth-clients", "yes"]`. Its own `cli`
    /// presents the client certificate, so it works when the server requires one.
    pub fn start_tls(pki: &TestPki, cert: &str, args: &[&str]) -> Self {
        Self::launch(args, Some((pki, cert)))
    }

    fn launch(args: &[&str], tls: Option<(&TestPki, &str)>) -> Self {
        let password = args
            .iter()
            .position(|a| *a == "--requirepass")
            .and_then(|i| args.get(i + 1))
            .map(|p| p.to_string());
        let mut last_log = String::new();
        for _ in 0..START_ATTEMPTS {
            let port = free_port();
            let dir = temp_dir(if tls.is_some() { "redis-tls" } else { "redis" });
            let log = dir.join("redis.log");
            let mut args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
            // A cluster node's bus port would be port + 10000, past 65535 for a high free
            // port: it gets a free port of its own, a fresh one each attempt, since another
            // process may take it as well as the client port.
            if args.iter().any(|a| a == "--cluster-enabled")
                && !args.iter().any(|a| a == "--cluster-port")
            {
                args.extend(["--cluster-port".to_string(), free_port().to_string()]);
            }
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let mut cmd = redis_command(&dir, &args, &log);
            match tls {
                None => {
                    cmd.args(["--port", &port.to_string()]);
                }
                Some((pki, cert)) => {
                    cmd.args(["--port", "0", "--tls-port", &port.to_string()])
                        .arg("--tls-cert-file")
                        .arg(pki.path(&format!("{cert}.pem")))
                        .arg("--tls-key-file")
                        .arg(pki.path(&format!("{cert}.key")))
                        .arg("--tls-ca-cert-file")
                        .arg(pki.path("ca.pem"));
                }
            }
            let child = spawn_or_explain(&mut cmd, "redis-server");
            let mut server = RedisServer {
                port,
                child,
                dir,
                password: password.clone(),
                tls: tls.map(|(pki, _)| CliTls {
                    ca: pki.file("ca.pem"),
                    cert: pki.file("client.pem"),
                    key: pki.file("client.key"),
                }),
                args: args.iter().map(|a| a.to_string()).collect(),
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
        if let Some(tls) = &self.tls {
            // --insecure: the harness talks to its own server, whose certificate may be
            // expired or name another host on purpose.
            cmd.args(["--tls", "--insecure", "--cacert", &tls.ca])
                .args(["--cert", &tls.cert, "--key", &tls.key]);
        }
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

    /// The server's process id (to stop and continue it, as a stalled host would).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends `signal` to the server (SIGSTOP and SIGCONT: a stalled host).
    pub fn signal(&self, signal: libc::c_int) {
        // SAFETY: kill(2) on the PID of a server this harness started and has not reaped.
        assert_eq!(unsafe { libc::kill(self.pid() as libc::pid_t, signal) }, 0);
    }

    /// Every command call the server counted (`INFO commandstats`, all commands).
    pub fn calls(&self) -> u64 {
        self.commandstats().values().sum()
    }

    /// Clients connected now (`INFO clients`), the harness's own `redis-cli` included.
    pub fn connected_clients(&self) -> u64 {
        let info = self.cli(&["INFO", "clients"]);
        info.lines()
            .find_map(|l| l.trim().strip_prefix("connected_clients:"))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no connected_clients in {info:?}"))
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

    /// Kill the server now (SIGKILL to its PID, then reap it), as a crash would; `Drop`
    /// later only removes the directory. For tests of a server dying mid-run.
    pub fn kill_now(&mut self) {
        kill_and_wait(&mut self.child);
    }

    /// Kill the server now (as [`RedisServer::kill_now`]) and start it again on the same
    /// port, in the same directory, with the same arguments (so it reloads what it
    /// persisted there); returns once it answers. Plaintext servers only.
    pub fn restart(&mut self) {
        assert!(self.tls.is_none(), "restart: plaintext servers only");
        self.kill_now();
        let log = self.dir.join("redis.log");
        let args: Vec<&str> = self.args.iter().map(String::as_str).collect();
        let mut cmd = redis_command(&self.dir, &args, &log);
        cmd.args(["--port", &self.port.to_string()]);
        self.child = spawn_or_explain(&mut cmd, "redis-server");
        if let Err(why) = self.wait_ready() {
            panic!(
                "redis-server did not restart: {why}\n--- redis.log ---\n{}",
                log_tail(&log, 20)
            );
        }
    }
}

/// `redis-server` with the harness's settings (127.0.0.1 only, no persistence unless
/// `args` ask for it, logging to `log`, appended), its port left for the caller to add.
fn redis_command(dir: &Path, args: &[&str], log: &Path) -> Command {
    let log_file = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .expect("open redis.log");
    let mut cmd = Command::new("redis-server");
    cmd.args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
        .arg("--dir")
        .arg(dir)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::from(log_file.try_clone().expect("clone log handle")))
        .stderr(Stdio::from(log_file));
    cmd
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

/// How a memcached is started.
enum Mode {
    Plain,
    /// `-Z` with this `-o` list.
    Tls(String),
    /// `-S` with one SASL user.
    Sasl {
        user: String,
        password: String,
    },
    /// `-Y` with an auth file of one user (memcache_text authentication).
    TextAuth {
        user: String,
        password: String,
    },
}

/// A SASL database with one user in `dir`, and the `memcached.conf` pointing at it.
fn make_sasl_db(dir: &Path, user: &str, password: &str) {
    let db = dir.join("sasldb2");
    let mut passwd = Command::new("saslpasswd2")
        .args(["-a", "memcached", "-c", "-p", "-f"])
        .arg(&db)
        .arg(user)
        .stdin(Stdio::piped())
        .spawn()
        .expect("saslpasswd2 not found: run `make test`, which installs sasl2-bin");
    passwd
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(password.as_bytes())
        .expect("password written");
    assert!(passwd.wait().expect("saslpasswd2 ran").success());
    fs::write(
        dir.join("memcached.conf"),
        format!("mech_list: plain\nsasldb_path: {}\n", db.display()),
    )
    .expect("SASL config written");
}

/// A throwaway `memcached` on 127.0.0.1 (TCP only, 256 MB, 2 threads): plaintext
/// ([`Memcached::start`]), TLS ([`Memcached::start_tls`], with a plaintext listener
/// beside it for the harness's own requests) or SASL ([`Memcached::start_sasl`]).
pub struct Memcached {
    /// The port kvbench is pointed at (TLS for a TLS server).
    pub port: u16,
    /// Where the harness's own text requests go: `port`, or the plaintext listener of a
    /// TLS server (it sees the same items and counts TLS connections too).
    admin_port: u16,
    /// `-Y`: the `set` that authenticates the harness's own connections, sent first.
    admin_auth: Option<String>,
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
        Self::launch(args, &Mode::Plain)
    }

    /// `memcached -S -Z`: SASL required, over TLS with the test PKI's `server`
    /// certificate (no plaintext listener: the harness sends it nothing).
    pub fn start_sasl_tls(pki: &TestPki, user: &str, password: &str) -> Self {
        let ssl = format!(
            "ssl_chain_cert={},ssl_key={}",
            pki.file("server.pem"),
            pki.file("server.key")
        );
        Self::launch(
            &["-Z", "-o", &ssl],
            &Mode::Sasl {
                user: user.to_string(),
                password: password.to_string(),
            },
        )
    }

    /// `memcached -Z`: TLS on `port` with the test PKI's `server` certificate;
    /// `extra_ssl` is appended to the `-o` list, e.g. `"ssl_verify_mode=2,ssl_ca_cert=..."`.
    pub fn start_tls(pki: &TestPki, extra_ssl: &str) -> Self {
        let mut ssl = format!(
            "ssl_chain_cert={},ssl_key={}",
            pki.file("server.pem"),
            pki.file("server.key")
        );
        if !extra_ssl.is_empty() {
            ssl.push(',');
            ssl.push_str(extra_ssl);
        }
        Self::launch(&[], &Mode::Tls(ssl))
    }

    /// `memcached -S`: SASL PLAIN required, with one user in a SASL database made by
    /// `saslpasswd2` (Debian's sasl2-bin). Binary protocol only: the harness's own text
    /// requests (`stats`, `get`...) do not work on it.
    pub fn start_sasl(user: &str, password: &str) -> Self {
        Self::launch(
            &[],
            &Mode::Sasl {
                user: user.to_string(),
                password: password.to_string(),
            },
        )
    }

    /// `memcached -Y` with an auth file holding one user: memcache_text authentication
    /// (the harness's own requests authenticate first).
    pub fn start_text_auth(user: &str, password: &str) -> Self {
        Self::launch(
            &[],
            &Mode::TextAuth {
                user: user.to_string(),
                password: password.to_string(),
            },
        )
    }

    fn launch(args: &[&str], mode: &Mode) -> Self {
        let mut last_log = String::new();
        for _ in 0..START_ATTEMPTS {
            let port = free_port();
            let admin_port = match mode {
                Mode::Tls(_) => free_port(),
                _ => port,
            };
            let dir = temp_dir(match mode {
                Mode::Plain => "memcached",
                Mode::Tls(_) => "memcached-tls",
                Mode::Sasl { .. } => "memcached-sasl",
                Mode::TextAuth { .. } => "memcached-auth",
            });
            let log = dir.join("memcached.log");
            let log_file = File::create(&log).expect("create memcached.log");
            let mut cmd = Command::new("memcached");
            match mode {
                Mode::Plain => {}
                Mode::Tls(ssl) => {
                    cmd.args(["-Z", "-o", ssl]);
                }
                Mode::Sasl { user, password } => {
                    make_sasl_db(&dir, user, password);
                    cmd.arg("-S").env("SASL_CONF_PATH", &dir);
                }
                Mode::TextAuth { user, password } => {
                    let file = dir.join("auth");
                    fs::write(&file, format!("{user}:{password}\n")).expect("auth file written");
                    cmd.arg("-Y").arg(&file);
                }
            }
            cmd.args(["-p", &port.to_string(), "-l", "127.0.0.1"]);
            if matches!(mode, Mode::Tls(_)) {
                // The harness's own requests go to a plaintext listener beside the TLS one.
                cmd.args(["-l", &format!("notls:127.0.0.1:{admin_port}")]);
            }
            cmd.args(["-U", "0", "-m", "256", "-t", "2"]);
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
            let admin_auth = match mode {
                Mode::TextAuth { user, password } => Some(format!(
                    "set kvbench-auth 0 0 {}\r\n{user} {password}\r\n",
                    user.len() + 1 + password.len()
                )),
                _ => None,
            };
            let mut server = Memcached {
                port,
                admin_port,
                admin_auth,
                child,
                dir,
            };
            let sasl = matches!(mode, Mode::Sasl { .. });
            match server.wait_ready(sasl) {
                Ok(()) => return server,
                Err(why) => {
                    last_log = format!("{why}\n--- memcached.log ---\n{}", log_tail(&log, 20));
                }
            }
        }
        panic!("memcached did not start after {START_ATTEMPTS} attempts: {last_log}");
    }

    /// Polls until the server listens and (unless it only speaks SASL) answers `stats`.
    fn wait_ready(&mut self, sasl: bool) -> Result<(), String> {
        let deadline = Instant::now() + STARTUP_TIMEOUT;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("memcached on port {} exited: {status}", self.port));
            }
            let listening = TcpStream::connect_timeout(
                &SocketAddr::from(([127, 0, 0, 1], self.port)),
                Duration::from_millis(200),
            )
            .is_ok();
            if listening && (sasl || self.request("stats\r\n", b"END\r\n").is_ok()) {
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
        let mut stream = self.connect()?;
        if let Some(auth) = &self.admin_auth {
            stream.write_all(auth.as_bytes())?;
        }
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

    /// A connection to the harness's own (plaintext) port.
    fn connect(&self) -> std::io::Result<TcpStream> {
        let addr: SocketAddr = ([127, 0, 0, 1], self.admin_port).into();
        let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
        stream.set_read_timeout(Some(Duration::from_secs(5)))?;
        Ok(stream)
    }

    /// `host:port` of this server, for messages.
    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Every `STAT name value` line of `stats`, as text (versions, rusage floats, ...).
    pub fn stats_raw(&self) -> HashMap<String, String> {
        let reply = self
            .request("stats\r\n", b"END\r\n")
            .unwrap_or_else(|e| panic!("memcached stats on port {}: {e}", self.admin_port));
        reply
            .lines()
            .filter_map(|l| l.trim().strip_prefix("STAT "))
            .filter_map(|l| l.split_once(' '))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// Kill the server now (SIGKILL, reaped): a pool member dying mid-run.
    pub fn kill_now(&mut self) {
        kill_and_wait(&mut self.child);
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

    /// Send raw bytes on a fresh connection and read until the reply ends with
    /// `terminator`. Binary safe (values may hold any byte).
    pub fn raw(&self, req: &[u8], terminator: &[u8]) -> Vec<u8> {
        let mut stream = self
            .connect()
            .unwrap_or_else(|e| panic!("connect to memcached {}: {e}", self.addr()));
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
        let mut stream = self
            .connect()
            .unwrap_or_else(|e| panic!("connect to memcached {}: {e}", self.addr()));
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

impl Drop for Memcached {
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
