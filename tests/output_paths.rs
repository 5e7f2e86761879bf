//! Output paths that are not plain files: a FIFO is written through (and stays a FIFO), a
//! symbolic link is followed to its target (and stays a link), a link to the process's own
//! standard output (`/proc/self/fd/1`, what `/dev/stdout` is) gets the bytes on that
//! output. Only FIFOs and links the tests make in their own directories are used: never a
//! system device.

mod common;

use std::ffi::CString;
use std::fs;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, symlink};
use std::path::Path;
use std::process::Stdio;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use common::{
    KVBENCH_TIMEOUT, RedisServer, TestDir, describe, kvbench, kvbench_at, kvbench_command,
};

fn testdata(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/testdata")
        .join(name)
        .display()
        .to_string()
}

/// A FIFO at `path`, a thread reading it to its end, and the test's own handle on it,
/// open for reading and writing. That handle lets the reader's open return at once and
/// keeps its end-of-file away until [`release`] drops it after the run, so the reader gets
/// everything kvbench wrote, and a FIFO renamed away (the old behaviour) leaves no thread
/// waiting for ever.
fn fifo_reader(path: &Path) -> (fs::File, JoinHandle<Vec<u8>>) {
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
    let hold = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .unwrap();
    let path = path.to_path_buf();
    let reader = thread::spawn(move || {
        let mut got = Vec::new();
        fs::File::open(path).unwrap().read_to_end(&mut got).unwrap();
        got
    });
    (hold, reader)
}

/// What the reader got, once the run is over.
fn release((hold, reader): (fs::File, JoinHandle<Vec<u8>>)) -> Vec<u8> {
    drop(hold);
    reader.join().unwrap()
}

fn is_fifo(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_fifo())
}

fn is_link(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

#[test]
fn report_and_merge_write_through_a_fifo_and_through_a_link() {
    let dir = TestDir::new("fifo-link");
    let input = testdata("memtier_default.json");

    // `kvbench report -o FIFO`: the page arrives at the reader, the FIFO stays.
    let fifo = dir.file("page.fifo");
    let reader = fifo_reader(&fifo);
    let run = kvbench(&["report", &input, "-o", &fifo.display().to_string()]).run();
    let page = release(reader);
    assert!(run.status.success(), "{}", describe(&run));
    assert!(is_fifo(&fifo), "the FIFO was replaced");
    let page = String::from_utf8_lossy(&page);
    assert!(page.contains("<html") && page.contains("</html>"), "{page}");

    // `kvbench report -o link.html`: the target gets the page, the link stays a link.
    let target = dir.file("target.html");
    fs::write(&target, "old").unwrap();
    let link = dir.file("link.html");
    symlink("target.html", &link).unwrap();
    let run = kvbench(&["report", &input, "-o", &link.display().to_string()]).run();
    assert!(run.status.success(), "{}", describe(&run));
    assert!(is_link(&link), "the link was replaced by a file");
    let written = fs::read_to_string(&target).unwrap();
    assert!(written.contains("</html>"), "target not written: {written}");

    // `kvbench merge`: its JSON into a FIFO, its table through a link.
    let fifo = dir.file("merged.fifo");
    let reader = fifo_reader(&fifo);
    let table_target = dir.file("table.txt");
    let table_link = dir.file("table-link.txt");
    symlink(&table_target, &table_link).unwrap();
    let run = kvbench(&[
        "merge",
        &input,
        &format!("--json-out-file={}", fifo.display()),
        "-o",
        &table_link.display().to_string(),
    ])
    .run();
    let json = release(reader);
    assert!(run.status.success(), "{}", describe(&run));
    assert!(is_fifo(&fifo) && is_link(&table_link));
    let json: serde_json::Value = serde_json::from_slice(&json).expect("JSON through the FIFO");
    assert!(json["ALL STATS"]["Totals"]["Count"].as_u64() > Some(0));
    let table = fs::read_to_string(&table_target).unwrap();
    assert!(table.contains("ALL STATS"), "{table}");
    let mut names: Vec<String> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "link.html",
            "merged.fifo",
            "page.fifo",
            "table-link.txt",
            "table.txt",
            "target.html"
        ],
        "no temporary left, nothing else made"
    );
}

/// `--json-out-file=js` where `js` is a link to `/proc/self/fd/1` (what `/dev/stdout`
/// is): the JSON follows the text report on standard output, whether that is a pipe or a
/// file the shell opened (`> cap.txt`), and `js` stays a link. The HDR files of the same
/// run go through links into a FIFO and a file.
#[test]
fn a_link_to_stdout_gets_the_json_on_stdout() {
    let server = RedisServer::start();
    let dir = TestDir::new("stdout-link");
    let js = dir.file("js");
    symlink("/proc/self/fd/1", &js).unwrap();
    let json_flag = format!("--json-out-file={}", js.display());
    let args = [
        "-t",
        "1",
        "-c",
        "1",
        "-n",
        "50",
        "--hide-histogram",
        &json_flag,
    ];

    // Standard output a pipe.
    let run = kvbench_at(server.port, &args).ok();
    let stdout = run.stdout_text();
    let (report, json) = split_report_and_json(&stdout);
    assert!(report.contains("ALL STATS"), "{stdout}");
    assert_eq!(json["ALL STATS"]["Totals"]["Count"], 50, "{stdout}");
    assert!(is_link(&js), "the link was replaced");

    // Standard output a regular file: the JSON is appended after the report.
    let cap = dir.file("cap.txt");
    let mut cmd = kvbench_command();
    let port = server.port.to_string();
    cmd.args(["-s", "127.0.0.1", "-p", &port])
        .args(args)
        .stdin(Stdio::null())
        .stdout(fs::File::create(&cap).unwrap())
        .stderr(Stdio::null());
    let status = wait_bounded(cmd.spawn().unwrap());
    assert!(status.success());
    let captured = fs::read_to_string(&cap).unwrap();
    let (report, json) = split_report_and_json(&captured);
    assert!(report.contains("ALL STATS"), "{captured}");
    assert_eq!(json["ALL STATS"]["Totals"]["Count"], 50, "{captured}");
    assert!(is_link(&js), "the link was replaced");

    // An HDR prefix whose files are a FIFO and a link: both written through.
    let real_txt = dir.file("real.txt");
    symlink(&real_txt, dir.file("h_FULL_RUN_1.txt")).unwrap();
    let hgrm = dir.file("h_FULL_RUN_1.hgrm");
    let reader = fifo_reader(&hgrm);
    let prefix = format!("--hdr-file-prefix={}", dir.file("h").display());
    let run = kvbench_at(server.port, &["-n", "20", "--hide-histogram", &prefix]).run();
    let log = release(reader);
    assert!(run.status.success(), "{}", describe(&run));
    assert!(is_fifo(&hgrm) && is_link(&dir.file("h_FULL_RUN_1.txt")));
    assert!(String::from_utf8_lossy(&log).contains("HISTF"));
    assert!(
        fs::read_to_string(&real_txt)
            .unwrap()
            .contains("Total count")
    );
}

/// The text report, then the JSON object from the first line that is `{`.
fn split_report_and_json(out: &str) -> (&str, serde_json::Value) {
    let at = out
        .find("\n{\n")
        .map(|i| i + 1)
        .unwrap_or_else(|| panic!("no JSON object on stdout:\n{out}"));
    let json = serde_json::from_str(&out[at..]).unwrap_or_else(|e| panic!("{e}:\n{out}"));
    (&out[..at], json)
}

/// Waits for `child` to exit, killing it after [`KVBENCH_TIMEOUT`].
fn wait_bounded(mut child: std::process::Child) -> std::process::ExitStatus {
    let deadline = Instant::now() + KVBENCH_TIMEOUT;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("kvbench did not finish within {KVBENCH_TIMEOUT:?}");
        }
        thread::sleep(Duration::from_millis(10));
    }
}

/// `--hdr-log` through a link writes the commands' logs beside the link's target, where
/// the totals' log lands (they went beside the link); a FIFO, which has no place beside
/// it for them, is refused before the run sends anything.
#[test]
fn hdr_log_command_files_go_beside_the_links_target() {
    let server = RedisServer::start();
    let dir = TestDir::new("hdr-log-link");
    fs::create_dir(dir.file("logs")).unwrap();
    let target = dir.file("logs/all.hlog");
    let link = dir.file("all.hlog");
    symlink(&target, &link).unwrap();
    let flag = format!("--hdr-log={}", link.display());
    let args = ["-t", "1", "-c", "1", "-n", "50", "--hide-histogram", &flag];
    kvbench_at(server.port, &args).ok();
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    for log in ["logs/all.hlog", "logs/all_SET.hlog", "logs/all_GET.hlog"] {
        assert!(dir.file(log).is_file(), "{log} was not written");
    }
    assert!(
        !dir.file("all_SET.hlog").exists(),
        "a command log went beside the link"
    );

    let fifo = dir.file("log.fifo");
    let c = CString::new(fifo.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
    let sent = server.commandstats().values().sum::<u64>();
    let flag = format!("--hdr-log={}", fifo.display());
    let out = kvbench_at(server.port, &["-t", "1", "-c", "1", "-n", "50", &flag]).run();
    assert_eq!(out.status.code(), Some(1), "{}", out.describe());
    let err = out.stderr_text();
    assert!(err.contains("not a regular file"), "{err}");
    // Only the harness's own INFO call since.
    assert_eq!(
        server.commandstats().values().sum::<u64>(),
        sent + 1,
        "{err}"
    );
}
