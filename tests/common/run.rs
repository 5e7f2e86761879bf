//! Running the `kvbench` binary the tests were built with: one builder for every test
//! file, with a hard timeout, and its JSON output read back when asked for.

use std::ops::Deref;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

use super::{Background, TestDir, describe, drain, read_json, run_with_timeout};

/// Default hard limit for one `kvbench` run in a test.
pub const KVBENCH_TIMEOUT: Duration = Duration::from_secs(120);

/// Runs `program ARGS...` (kvbench, a link to it, or another tool such as the real
/// redis-benchmark or strace) to completion within [`KVBENCH_TIMEOUT`]; panics with
/// what it printed unless it exits 0.
pub fn run_ok(program: &str, args: &[String]) -> Output {
    let mut cmd = Command::new(program);
    cmd.args(args);
    let out = run_with_timeout(cmd, KVBENCH_TIMEOUT);
    assert!(
        out.status.success(),
        "{program} {args:?}: {}",
        describe(&out)
    );
    out
}

/// A `kvbench` command line to run: see [`kvbench`] and [`kvbench_at`].
pub struct Kvbench {
    args: Vec<String>,
    timeout: Duration,
    json: Option<(TestDir, PathBuf)>,
}

/// `kvbench ARGS...`.
pub fn kvbench(args: &[&str]) -> Kvbench {
    Kvbench {
        args: args.iter().map(|a| a.to_string()).collect(),
        timeout: KVBENCH_TIMEOUT,
        json: None,
    }
}

/// `kvbench -s 127.0.0.1 -p PORT ARGS...`.
pub fn kvbench_at(port: u16, args: &[&str]) -> Kvbench {
    let port = port.to_string();
    kvbench(&["-s", "127.0.0.1", "-p", &port]).args(args)
}

/// A `Command` for the `kvbench` binary cargo built for these tests.
pub fn kvbench_command() -> Command {
    Command::new(env!("CARGO_BIN_EXE_kvbench"))
}

impl Kvbench {
    /// More arguments.
    pub fn args<S: AsRef<str>>(mut self, args: &[S]) -> Self {
        self.args
            .extend(args.iter().map(|a| a.as_ref().to_string()));
        self
    }

    /// Adds `--json-out-file` in a scratch directory of its own; [`Run::json`] reads it.
    pub fn with_json(mut self) -> Self {
        let dir = TestDir::new("json");
        let path = dir.file("out.json");
        self.args
            .push(format!("--json-out-file={}", path.display()));
        self.json = Some((dir, path));
        self
    }

    /// A hard limit other than [`KVBENCH_TIMEOUT`].
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Runs to completion, whatever the exit status.
    pub fn run(self) -> Run {
        let mut cmd = kvbench_command();
        cmd.args(&self.args);
        Run {
            out: run_with_timeout(cmd, self.timeout),
            args: self.args,
            json: self.json,
        }
    }

    /// Runs to completion; panics, with what it printed, unless it exits 0.
    pub fn ok(self) -> Run {
        let run = self.run();
        assert!(
            run.status.success(),
            "kvbench {:?}\n{}",
            run.args,
            describe(&run.out)
        );
        run
    }

    /// Starts it in the background (see [`Background`]).
    pub fn spawn(self) -> Background {
        let mut cmd = kvbench_command();
        cmd.args(&self.args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let desc = format!("{cmd:?}");
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {desc}: {e}"));
        let stdout = drain(child.stdout.take().expect("stdout is piped"));
        let stderr = drain(child.stderr.take().expect("stderr is piped"));
        Background::new(child, desc, stdout, stderr, self.json)
    }
}

/// A finished run: its output (also through `Deref`) and its JSON file, if asked for.
pub struct Run {
    pub out: Output,
    args: Vec<String>,
    json: Option<(TestDir, PathBuf)>,
}

impl Run {
    pub(super) fn from_parts(out: Output, json: Option<(TestDir, PathBuf)>) -> Run {
        Run {
            out,
            args: Vec::new(),
            json,
        }
    }

    /// Standard output as text.
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.out.stdout).into_owned()
    }

    /// Standard error as text.
    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.out.stderr).into_owned()
    }

    /// Status, stdout and stderr, for assertion messages.
    pub fn describe(&self) -> String {
        describe(&self.out)
    }

    /// Whether the run wrote its JSON file.
    pub fn json_written(&self) -> bool {
        self.json.as_ref().is_some_and(|(_, path)| path.exists())
    }

    /// The JSON file the run wrote (see [`Kvbench::with_json`]), parsed.
    pub fn json(&self) -> Value {
        let (_, path) = self
            .json
            .as_ref()
            .expect("the run was not asked for JSON: use with_json()");
        read_json(path)
    }
}

impl Deref for Run {
    type Target = Output;

    fn deref(&self) -> &Output {
        &self.out
    }
}
