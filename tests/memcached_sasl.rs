//! memcache_binary SASL PLAIN authentication against a real memcached started with `-S`
//! and a SASL database made by the test (`saslpasswd2`, from Debian's sasl2-bin).

mod common;

use std::io::Write;
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use common::{TestDir, describe, free_port, run_kvbench};

/// A memcached that requires SASL, with one user `bench` / `s3cret`.
struct SaslMemcached {
    port: u16,
    child: Child,
    _dir: TestDir,
}

impl SaslMemcached {
    fn start() -> SaslMemcached {
        let dir = TestDir::new("sasl");
        let db = dir.path().join("sasldb2");
        let mut passwd = Command::new("saslpasswd2")
            .args(["-a", "memcached", "-c", "-p", "-f"])
            .arg(&db)
            .arg("bench")
            .stdin(Stdio::piped())
            .spawn()
            .expect("saslpasswd2 not found: run `make test`, which installs sasl2-bin");
        passwd
            .stdin
            .take()
            .expect("stdin is piped")
            .write_all(b"s3cret")
            .expect("password written");
        assert!(passwd.wait().expect("saslpasswd2 ran").success());
        std::fs::write(
            dir.path().join("memcached.conf"),
            format!("mech_list: plain\nsasldb_path: {}\n", db.display()),
        )
        .expect("SASL config written");
        let port = free_port();
        let mut cmd = Command::new("memcached");
        // As root memcached needs a user to run as.
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            cmd.args(["-u", "root"]);
        }
        let child = cmd
            .args(["-S", "-l", "127.0.0.1", "-U", "0", "-p", &port.to_string()])
            .env("SASL_CONF_PATH", dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("memcached starts");
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "memcached -S did not start");
            thread::sleep(Duration::from_millis(50));
        }
        SaslMemcached {
            port,
            child,
            _dir: dir,
        }
    }
}

impl Drop for SaslMemcached {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn run(server: &SaslMemcached, auth: Option<&str>) -> std::process::Output {
    let port = server.port.to_string();
    let mut args = vec![
        "-P",
        "memcache_binary",
        "-s",
        "127.0.0.1",
        "-p",
        &port,
        "-t",
        "1",
        "-c",
        "2",
        "-n",
        "100",
        "--hide-histogram",
    ];
    if let Some(auth) = auth {
        args.extend(["-a", auth]);
    }
    run_kvbench(&args)
}

#[test]
fn sasl_plain_authenticates_and_loads() {
    let server = SaslMemcached::start();
    let out = run(&server, Some("bench:s3cret"));
    assert!(out.status.success(), "{}", describe(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("Totals"));
}

#[test]
fn wrong_password_is_one_clear_error() {
    let server = SaslMemcached::start();
    let out = run(&server, Some("bench:wrong"));
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let last = stderr.lines().last().unwrap_or("");
    assert!(
        last.starts_with("error: authentication as user 'bench' failed"),
        "{stderr}"
    );
    assert!(!stderr.contains("wrong"), "the password leaked: {stderr}");
}

#[test]
fn no_credentials_names_the_fix() {
    let server = SaslMemcached::start();
    let out = run(&server, None);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("requires authentication"), "{stderr}");
}
