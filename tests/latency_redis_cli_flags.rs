//! redis-cli's own spellings and habits in `kvbench latency` and `kvbench
//! intrinsic-latency`, checked against real servers started here: `-3` and `-2` (what
//! the server saw: HELLO 3, or no HELLO), `-c` (cluster mode: PING as it is), `--insecure` and `--cacertdir` on TLS, and a reader that closes
//! the pipe after its first line (`| head -1`), which ends the probe quietly with 141 as
//! it ends redis-cli (killed by SIGPIPE), not with an error about the closed pipe, and
//! `--askpass` (the password piped in, or typed at a terminal that shows a `*` per
//! character, as redis-cli's does).

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Child, ExitStatus, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::{
    CONDITION_TIMEOUT, RedisServer, Run, TestDir, TestPki, kvbench, kvbench_command, wait_until,
};

const TIMEOUT: Duration = Duration::from_secs(60);

/// 128 + SIGPIPE: what a shell reports for a process that SIGPIPE ended.
const READER_GONE: i32 = 141;

/// `redis-cli -c -p PORT --latency` (cluster mode, which PING's reply never redirects)
/// probes the node as given, as redis-cli does; `-c` was refused as an unknown argument.
/// The sample count of a `--raw` line (`min max avg count`).
fn raw_samples(run: &Run) -> u64 {
    run.stdout_text()
        .split(' ')
        .nth(3)
        .and_then(|c| c.trim().parse().ok())
        .unwrap_or_else(|| panic!("a raw line: {}", run.describe()))
}

#[test]
fn dash_c_probes_the_node_as_redis_cli() {
    let server = RedisServer::start();
    let port = server.port.to_string();
    server.config_resetstat();
    let run = kvbench(&[
        "latency",
        "-c",
        "-p",
        &port,
        "--latency",
        "--raw",
        "-i",
        "0.2",
    ])
    .timeout(TIMEOUT)
    .ok();
    let count = raw_samples(&run);
    assert!(count > 0, "{}", run.describe());
    let pings = server.commandstats().get("ping").copied().unwrap_or(0);
    assert!(
        pings >= count,
        "the server saw each PING: {pings} < {count}"
    );
}

#[test]
fn dash_3_says_hello_3_and_dash_2_says_no_hello_as_redis_cli() {
    let server = RedisServer::start();
    let port = server.port.to_string();
    for (flag, hellos) in [("-3", 1), ("-2", 0)] {
        server.config_resetstat();
        let run = kvbench(&["latency", "-p", &port, flag, "--raw", "-i", "0.2"])
            .timeout(TIMEOUT)
            .ok();
        let count = raw_samples(&run);
        let stats = server.commandstats();
        assert_eq!(
            stats.get("hello").copied().unwrap_or(0),
            hellos,
            "{flag}: {stats:?}"
        );
        assert!(
            stats.get("ping").copied().unwrap_or(0) >= count,
            "{flag}: {stats:?}"
        );
    }
    // Two protocols at once is a usage error, as -P twice would be.
    let run = kvbench(&["latency", "-p", &port, "-3", "-P", "memcache_text"])
        .timeout(TIMEOUT)
        .run();
    assert_eq!(run.status.code(), Some(1), "{}", run.describe());
    assert_eq!(run.stderr_text().lines().count(), 1, "{}", run.describe());
}

#[test]
fn insecure_skips_certificate_verification_as_redis_cli() {
    let pki = TestPki::generate();
    let tls = RedisServer::start_tls(&pki, "server", &["--tls-auth-clients", "no"]);
    let port = tls.port.to_string();
    let argv = [
        "latency",
        "-h",
        "127.0.0.1",
        "-p",
        &port,
        "--tls",
        "--raw",
        "-i",
        "0.2",
    ];
    // No CA given: the server's certificate cannot be verified...
    let refused = kvbench(&argv).timeout(TIMEOUT).run();
    assert_eq!(refused.status.code(), Some(1), "{}", refused.describe());
    // ...unless redis-cli's --insecure says not to.
    let run = kvbench(&argv).args(&["--insecure"]).timeout(TIMEOUT).ok();
    assert_eq!(
        run.stdout_text().split(' ').count(),
        4,
        "{}",
        run.describe()
    );
    assert!(tls.commandstats().get("ping").copied().unwrap_or(0) >= 1);
}

/// redis-cli's `--cacertdir DIR` trusts the CA certificates in a directory; kvbench
/// latency refused it as an unexpected argument.
#[test]
fn cacertdir_trusts_a_directory_of_cas_as_redis_cli() {
    let pki = TestPki::generate();
    let tls = RedisServer::start_tls(&pki, "server", &["--tls-auth-clients", "no"]);
    let port = tls.port.to_string();
    let dir = TestDir::new("latency-cacertdir");
    std::fs::copy(pki.path("ca.pem"), dir.file("ca.pem")).expect("copy the CA");
    let dir_arg = dir.path().to_string_lossy().to_string();
    let probe = |dir: &str| {
        let args = ["-h", "127.0.0.1", "-p", &port, "--tls", "--cacertdir", dir];
        kvbench(&["latency"])
            .args(&args)
            .args(&["--raw", "-i", "0.2"])
            .timeout(TIMEOUT)
            .run()
    };
    tls.config_resetstat();
    let run = probe(&dir_arg);
    assert!(run.status.success(), "{}", run.describe());
    assert_eq!(
        run.stdout_text().split(' ').count(),
        4,
        "{}",
        run.describe()
    );
    assert!(tls.commandstats().get("ping").copied().unwrap_or(0) >= 1);

    // A directory without the server's CA verifies nothing, as --cacert's other CA.
    let other = TestDir::new("latency-cacertdir-other");
    std::fs::copy(pki.path("other-ca.pem"), other.file("other-ca.pem")).expect("copy");
    let other_arg = other.path().to_string_lossy().to_string();
    let refused = probe(&other_arg);
    assert_eq!(refused.status.code(), Some(1), "{}", refused.describe());
    assert!(
        refused.stderr_text().contains("certificate"),
        "{}",
        refused.describe()
    );

    // Without TLS it would do nothing: refused in one line, as --cacert is.
    let plain = RedisServer::start();
    let plain_port = plain.port.to_string();
    let refused = kvbench(&["latency", "-p", &plain_port, "--cacertdir", &dir_arg])
        .timeout(TIMEOUT)
        .run();
    assert_eq!(refused.status.code(), Some(1), "{}", refused.describe());
    assert!(
        refused.stderr_text().contains("--cacertdir applies to TLS"),
        "{}",
        refused.describe()
    );
}

/// Runs kvbench with `args`, reads its first line of output, closes the pipe as `head -1`
/// does, and returns how it ended and what it printed on stderr.
fn close_after_first_line(args: &[&str]) -> (ExitStatus, String) {
    let mut child: Child = kvbench_command()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kvbench starts");
    let mut stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
    let mut first = String::new();
    stdout.read_line(&mut first).expect("a first line");
    assert!(!first.is_empty(), "{args:?}: no output");
    drop(stdout);
    let mut status = None;
    wait_until(
        "kvbench to end after its reader went",
        CONDITION_TIMEOUT,
        || {
            status = child.try_wait().expect("wait");
            status.is_some()
        },
    );
    let mut err = String::new();
    let _ =
        std::io::Read::read_to_string(&mut child.stderr.take().expect("piped stderr"), &mut err);
    (status.expect("ended"), err)
}

#[test]
fn a_reader_that_closes_the_pipe_ends_the_probe_quietly() {
    let server = RedisServer::start();
    let port = server.port.to_string();
    for args in [
        &["latency", "-p", &port, "--history", "-i", "0.2"][..],
        &["latency", "-p", &port, "--dist", "-i", "0.2"][..],
        &["intrinsic-latency", "1"][..],
    ] {
        let (status, err) = close_after_first_line(args);
        assert_eq!(status.code(), Some(READER_GONE), "{args:?}: {err}");
        assert_eq!(err, "", "{args:?}: nothing on stderr");
    }
    // The probe stopped: its connection is gone from the server.
    wait_until("the probe's connection to close", CONDITION_TIMEOUT, || {
        server.connected_clients() <= 1
    });
}

/// Runs `kvbench ARGS...` with `input` on its standard input (a pipe, then closed), and
/// returns what it did; kills it and panics if it outlives [`TIMEOUT`].
fn run_with_input(args: &[&str], input: &str) -> Output {
    let mut child = kvbench_command()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kvbench starts");
    let mut stdin = child.stdin.take().expect("piped stdin");
    stdin.write_all(input.as_bytes()).expect("write stdin");
    drop(stdin);
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output()));
    match rx.recv_timeout(TIMEOUT) {
        Ok(out) => out.expect("wait"),
        Err(_) => {
            // SAFETY: kill has no memory preconditions; the child is not reaped yet, so
            // the PID is its own.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
            panic!("kvbench {args:?} did not end");
        }
    }
}

#[test]
fn askpass_reads_the_password_from_a_pipe_as_redis_cli() {
    let server = RedisServer::start_with(&["--requirepass", "pa:ss"]);
    let port = server.port.to_string();
    let argv = ["latency", "-p", &port, "--askpass", "--raw", "-i", "0.2"];
    // redis-cli reads the line whole (colons and all) and prompts nobody on a pipe; it
    // wins over a wrong -a.
    for extra in [&[][..], &["-a", "wrong"]] {
        let out = run_with_input(&[&argv[..], extra].concat(), "pa:ss\n");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{extra:?}: {out:?}");
        assert_eq!(stdout.split(' ').count(), 4, "{extra:?}: {stdout:?}");
        assert!(out.stderr.is_empty(), "{extra:?}: {out:?}");
    }
    assert!(server.commandstats().get("ping").copied().unwrap_or(0) >= 2);
    // A wrong password piped in: the very line -a's wrong password gives, and exit 1.
    let piped = run_with_input(&argv, "wrong\n");
    let given = run_with_input(&["latency", "-p", &port, "-a", "wrong", "--raw"], "");
    assert_eq!(piped.status.code(), Some(1), "{piped:?}");
    let err = String::from_utf8_lossy(&piped.stderr);
    assert!(err.contains("WRONGPASS"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(piped.stderr, given.stderr);
    assert!(piped.stdout.is_empty(), "{piped:?}");
    // Nothing on stdin: one line, no connection tried.
    let empty = run_with_input(&argv, "");
    assert_eq!(empty.status.code(), Some(1), "{empty:?}");
    let err = String::from_utf8_lossy(&empty.stderr);
    assert!(
        err.starts_with("error: --askpass read an empty password"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// A pseudo-terminal: (the side a user types on, the side kvbench reads as stdin).
fn pty() -> (std::fs::File, OwnedFd) {
    let (mut user, mut program) = (-1, -1);
    // SAFETY: two valid out-pointers; null name, termios and winsize are allowed.
    let rc = unsafe {
        libc::openpty(
            &mut user,
            &mut program,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: openpty returned two fresh descriptors that nothing else owns.
    unsafe {
        (
            std::fs::File::from_raw_fd(user),
            OwnedFd::from_raw_fd(program),
        )
    }
}

/// Whether the terminal `fd` belongs to echoes what is typed.
fn echoes(fd: &OwnedFd) -> bool {
    use std::os::fd::AsRawFd;
    // SAFETY: termios is plain data, filled in by tcgetattr before it is read.
    let mut t: libc::termios = unsafe { std::mem::zeroed() };
    // SAFETY: a valid descriptor and pointer.
    assert_eq!(unsafe { libc::tcgetattr(fd.as_raw_fd(), &mut t) }, 0);
    t.c_lflag & libc::ECHO != 0
}

/// Whether the terminal whose user side is `user` has output waiting: with kvbench's
/// stdout and stderr piped, only its echo of what was typed could be there.
fn output_waiting(user: &std::fs::File) -> bool {
    use std::os::fd::AsRawFd;
    let mut poll = libc::pollfd {
        fd: user.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd; a zero timeout only looks.
    assert!(unsafe { libc::poll(&mut poll, 1, 0) } >= 0);
    poll.revents & libc::POLLIN != 0
}

/// All a pipe has given so far, gathered by a thread as it comes, so a test can wait for
/// output with a deadline instead of sleeping.
struct Gathered {
    chunks: mpsc::Receiver<Vec<u8>>,
    seen: Vec<u8>,
}

impl Gathered {
    fn new(mut from: impl Read + Send + 'static) -> Gathered {
        let (tx, chunks) = mpsc::channel();
        std::thread::spawn(move || {
            let mut buf = [0u8; 256];
            while let Ok(n @ 1..) = from.read(&mut buf) {
                if tx.send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        Gathered {
            chunks,
            seen: Vec::new(),
        }
    }

    /// Waits until as many bytes as `want` holds have come, or the pipe closed, or
    /// [`CONDITION_TIMEOUT`] passed, and asserts they are `want`, byte for byte.
    fn expect(&mut self, want: &[u8]) {
        let deadline = Instant::now() + CONDITION_TIMEOUT;
        while self.seen.len() < want.len() {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.chunks.recv_timeout(left) {
                Ok(chunk) => self.seen.extend(chunk),
                Err(_) => break,
            }
        }
        assert_eq!(
            self.seen.escape_ascii().to_string(),
            want.escape_ascii().to_string()
        );
    }

    /// Everything, once the pipe has closed (its writer has ended).
    fn all(mut self) -> Vec<u8> {
        while let Ok(chunk) = self.chunks.recv_timeout(CONDITION_TIMEOUT) {
            self.seen.extend(chunk);
        }
        self.seen
    }
}

/// kvbench with a terminal for stdin and pipes for stdout and stderr, once it has
/// prompted (on stderr, as its stdout is not a terminal) with echo off; its stderr so far.
fn prompted_on_a_terminal(args: &[&str]) -> (Child, std::fs::File, OwnedFd, Gathered) {
    let (user, program) = pty();
    let mut child = kvbench_command()
        .args(args)
        .stdin(Stdio::from(program.try_clone().expect("clone")))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kvbench starts");
    let mut stderr = Gathered::new(child.stderr.take().expect("piped stderr"));
    stderr.expect(PROMPT);
    // Echo went off before the prompt was written.
    assert!(!echoes(&program), "echo is off at the prompt");
    (child, user, program, stderr)
}

const PROMPT: &[u8] = b"Please input password: ";

/// What takes one `*` off a terminal's line: back, blank, back.
const ERASE: &[u8] = b"\x08 \x08";

/// How `child` ended, waiting for it up to [`CONDITION_TIMEOUT`].
fn ended(child: &mut Child) -> ExitStatus {
    let mut status = None;
    wait_until("kvbench to end", CONDITION_TIMEOUT, || {
        status = child.try_wait().expect("wait");
        status.is_some()
    });
    status.expect("ended")
}

#[test]
fn askpass_on_a_terminal_shows_a_star_per_character_and_restores_the_terminal() {
    let server = RedisServer::start_with(&["--requirepass", "secret"]);
    let port = server.port.to_string();
    let argv = ["latency", "-p", &port, "--askpass", "--raw", "-i", "0.2"];

    // A `*` for each key as it comes, a Backspace (DEL or ^H) takes one off, and one
    // on an empty line shows nothing; the terminal echoes none of it in clear.
    server.config_resetstat();
    let (mut child, mut user, program, mut stderr) = prompted_on_a_terminal(&argv);
    let mut shown = PROMPT.to_vec();
    for (keys, shows) in [
        (&b"\x7fsecrx"[..], &b"*****"[..]),
        (b"\x7f", ERASE),
        (b"ey", b"**"),
        (b"\x08", ERASE),
        (b"t", b"*"),
    ] {
        user.write_all(keys).expect("type");
        shown.extend(shows);
        stderr.expect(&shown);
        assert!(!output_waiting(&user), "the terminal echoed {keys:?}");
    }
    // Enter: the line ends, and "secret", typed with two keys rubbed out, is let in.
    user.write_all(b"\r").expect("type Enter");
    let status = ended(&mut child);
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .expect("piped stdout")
        .read_to_string(&mut stdout)
        .expect("read stdout");
    shown.push(b'\n');
    assert_eq!(
        stderr.all().escape_ascii().to_string(),
        shown.escape_ascii().to_string()
    );
    assert!(status.success(), "{stdout:?}");
    let fields: Vec<&str> = stdout.split(' ').collect();
    assert_eq!(fields.len(), 4, "{stdout:?}");
    let samples: u64 = fields[3].trim().parse().expect("a sample count");
    let pings = server.commandstats().get("ping").copied().unwrap_or(0);
    assert!(
        samples >= 1 && pings >= samples,
        "{pings} pings for {stdout:?}"
    );
    assert!(echoes(&program), "echo is back on after the line");

    // Ctrl-D on an empty line: no password, refused as stdin's end on a pipe is, with
    // the prompt's line ended first; the terminal as it was, nothing sent.
    server.config_resetstat();
    let (mut child, mut user, program, stderr) = prompted_on_a_terminal(&argv);
    user.write_all(b"\x04").expect("type ^D");
    assert_eq!(ended(&mut child).code(), Some(1));
    let err = String::from_utf8(stderr.all()).expect("text");
    let rest = err
        .strip_prefix("Please input password: \n")
        .unwrap_or_else(|| panic!("{err:?}"));
    assert!(
        rest.starts_with("error: --askpass read an empty password"),
        "{err:?}"
    );
    assert_eq!(rest.lines().count(), 1, "{err:?}");
    assert!(echoes(&program), "echo is back on after ^D");

    // Ctrl-C at the prompt: the terminal as it was, 128 + SIGINT, no probe sent.
    let (mut child, _user, program, _stderr) = prompted_on_a_terminal(&argv);
    // SAFETY: kill has no memory preconditions; the child is not reaped yet.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    assert_eq!(ended(&mut child).code(), Some(130));
    assert!(echoes(&program), "echo is back on after Ctrl-C");
    assert_eq!(server.commandstats().get("ping"), None, "no probe was sent");
}
