//! Completions and the man page as a user meets them: the bash script loads and completes
//! tools and flags in a real bash, the page renders with `man -l` (else groff) without a
//! warning, `docs/kvbench.1` is the binary's own page, and `scripts/install.sh` (what
//! `make install` runs) lays everything out under a prefix.

mod common;

use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::{TestDir, describe, kvbench, run_with_timeout};

const TOOL_DEADLINE: Duration = Duration::from_secs(60);

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_kvbench")
}

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool} >/dev/null 2>&1")])
        .status()
        .is_ok_and(|s| s.success())
}

/// What bash's completion offers for the words of `line` (the last one being completed),
/// with the script `kvbench completions bash` prints loaded.
fn bash_complete(line: &[&str]) -> Vec<String> {
    let words = line
        .iter()
        .map(|w| format!("'{w}'"))
        .collect::<Vec<_>>()
        .join(" ");
    let script = format!(
        "set -e\nsource <('{bin}' completions bash)\ncomplete -p kvbench >/dev/null\n\
         COMP_WORDS=({words})\nCOMP_CWORD={cword}\nCOMP_LINE=\"${{COMP_WORDS[*]}}\"\n\
         COMP_POINT=${{#COMP_LINE}}\n_kvbench kvbench \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"\n\
         printf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        bin = bin(),
        cword = line.len() - 1,
    );
    let mut cmd = Command::new("bash");
    cmd.args(["--norc", "--noprofile", "-c", &script]);
    let out = run_with_timeout(cmd, TOOL_DEADLINE);
    assert!(out.status.success(), "bash completion\n{}", describe(&out));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn the_bash_script_loads_and_completes_tools_and_flags() {
    // Loads cleanly, as a user's shell would source it.
    let mut cmd = Command::new("bash");
    cmd.args([
        "--norc",
        "--noprofile",
        "-c",
        &format!("source <('{}' completions bash)", bin()),
    ]);
    let out = run_with_timeout(cmd, TOOL_DEADLINE);
    assert!(out.status.success(), "{}", describe(&out));
    assert!(out.stderr.is_empty(), "{}", describe(&out));

    let tools = bash_complete(&["kvbench", "re"]);
    assert!(tools.contains(&"report".to_string()), "{tools:?}");
    assert!(tools.contains(&"redis-benchmark".to_string()), "{tools:?}");
    let flags = bash_complete(&["kvbench", "--rat"]);
    assert!(flags.contains(&"--ratio".to_string()), "{flags:?}");
    let flags = bash_complete(&["kvbench", "--prometheus-p"]);
    assert!(
        flags.contains(&"--prometheus-port".to_string()),
        "{flags:?}"
    );
    let flags = bash_complete(&["kvbench", "report", "--ou"]);
    assert_eq!(flags, ["--out-file"]);
    let shells = bash_complete(&["kvbench", "completions", ""]);
    for shell in ["bash", "zsh", "fish"] {
        assert!(shells.contains(&shell.to_string()), "{shells:?}");
    }
}

#[test]
fn zsh_and_fish_scripts_are_written_and_parse_where_the_shell_exists() {
    for (shell, check) in [("zsh", ["zsh", "-n"]), ("fish", ["fish", "--no-execute"])] {
        let run = kvbench(&["completions", shell]).ok();
        let script = run.stdout_text();
        assert!(script.contains("report") && script.contains("prometheus-port"));
        if !have(check[0]) {
            println!("{shell} is not installed: its script's syntax was not checked");
            continue;
        }
        let dir = TestDir::new(&format!("completions-{shell}"));
        let path = dir.file("script");
        fs::write(&path, &script).unwrap();
        let mut cmd = Command::new(check[0]);
        cmd.arg(check[1]).arg(&path);
        let out = run_with_timeout(cmd, TOOL_DEADLINE);
        assert!(out.status.success(), "{shell}: {}", describe(&out));
    }
    let run = kvbench(&["completions", "tcsh"]).run();
    assert_eq!(run.status.code(), Some(1));
    assert_eq!(run.stderr_text().lines().count(), 1, "{}", run.describe());
}

/// The page as a reader sees it: `man -l` (else groff), every tool's section, no
/// formatter warning.
fn render_page(page: &Path) -> String {
    let out = if have("man") {
        let mut cmd = Command::new("man");
        cmd.args(["-l", "-P", "cat"])
            .arg(page)
            .env("MANWIDTH", "100")
            .env("MAN_KEEP_FORMATTING", "0");
        run_with_timeout(cmd, TOOL_DEADLINE)
    } else {
        assert!(have("groff"), "neither man nor groff is installed");
        let mut cmd = Command::new("groff");
        cmd.args(["-man", "-Tutf8", "-ww"]).arg(page);
        run_with_timeout(cmd, TOOL_DEADLINE)
    };
    assert!(out.status.success(), "{}", describe(&out));
    plain(&String::from_utf8_lossy(&out.stdout))
}

/// Formatted man output as plain text: overstrikes (`K\bK` bold, `_\bx` underline) and SGR
/// escapes removed, as `col -b` would.
fn plain(text: &str) -> String {
    let mut out: Vec<char> = Vec::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{8}' => {
                out.pop();
            }
            '\u{1b}' if chars.peek() == Some(&'[') => {
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            c => out.push(c),
        }
    }
    out.into_iter().collect()
}

#[test]
fn the_man_page_renders_and_docs_holds_the_current_one() {
    let run = kvbench(&["man"]).ok();
    let page = run.stdout_text();
    let docs = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/kvbench.1"))
        .expect("docs/kvbench.1");
    assert!(
        docs == page,
        "docs/kvbench.1 is not `kvbench man`'s output: run `make man` and commit it"
    );

    let dir = TestDir::new("man");
    let path = dir.file("kvbench.1");
    fs::write(&path, &page).unwrap();
    // groff's own warnings (bad escapes, unknown macros, input it cannot read) are errors.
    if have("groff") {
        let mut cmd = Command::new("groff");
        cmd.args(["-man", "-Tutf8", "-ww", "-z"]).arg(&path);
        let out = run_with_timeout(cmd, TOOL_DEADLINE);
        assert!(
            out.status.success() && out.stderr.is_empty(),
            "{}",
            describe(&out)
        );
    }
    let text = render_page(&path);
    for needle in [
        "KVBENCH(1)",
        "KVBENCH MEMTIER_BENCHMARK",
        "KVBENCH REPORT",
        "KVBENCH INTRINSIC-LATENCY",
        "KVBENCH LATENCY",
        "KVBENCH REDIS-BENCHMARK",
        "KVBENCH ZBENCH",
        "KVBENCH MERGE",
        "KVBENCH COMPLETIONS",
        "--prometheus-port",
        "--key-pattern",
        "--out-file",
        "Usage: kvbench redis-benchmark [OPTIONS] [COMMAND ARGS...]",
        "EXIT STATUS",
    ] {
        assert!(text.contains(needle), "the page lacks {needle:?}");
    }
}

#[test]
fn install_lays_out_the_binary_page_and_completions_under_a_prefix() {
    let dir = TestDir::new("install");
    let prefix = dir.path().join("usr");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/install.sh");
    let install = |step: &str| {
        let mut cmd = Command::new("bash");
        cmd.arg(&script)
            .arg(step)
            .env("KVBENCH", bin())
            .env("PREFIX", &prefix)
            .env_remove("DESTDIR");
        run_with_timeout(cmd, TOOL_DEADLINE)
    };
    let out = install("files");
    assert!(out.status.success(), "{}", describe(&out));
    for file in [
        "bin/kvbench",
        "share/man/man1/kvbench.1",
        "share/bash-completion/completions/kvbench",
        "share/zsh/site-functions/_kvbench",
        "share/fish/vendor_completions.d/kvbench.fish",
    ] {
        let path = prefix.join(file);
        let meta = fs::metadata(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(meta.len() > 0, "{file} is empty");
    }
    // The installed page renders and the installed script loads.
    let text = render_page(&prefix.join("share/man/man1/kvbench.1"));
    assert!(text.contains("KVBENCH REPORT"));
    let mut cmd = Command::new("bash");
    cmd.args(["--norc", "--noprofile", "-c"]).arg(format!(
        "source '{}' && complete -p kvbench",
        prefix
            .join("share/bash-completion/completions/kvbench")
            .display()
    ));
    let out = run_with_timeout(cmd, TOOL_DEADLINE);
    assert!(out.status.success(), "{}", describe(&out));
    // No redis-benchmark link unless asked for.
    assert!(!prefix.join("bin/redis-benchmark").exists());

    // Asked for: installed only when this kvbench speaks redis-benchmark's command line.
    let speaks = Command::new(bin())
        .args(["redis-benchmark", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    let out = install("links");
    let link = prefix.join("bin/redis-benchmark");
    if speaks {
        assert!(out.status.success(), "{}", describe(&out));
        assert_eq!(fs::read_link(&link).unwrap(), Path::new("kvbench"));
    } else {
        assert!(!out.status.success(), "{}", describe(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("no redis-benchmark front end"), "{stderr}");
        assert!(!link.exists());
    }
}

#[test]
fn every_tool_prints_its_version() {
    let version = env!("CARGO_PKG_VERSION");
    let cases: [(&[&str], String); 8] = [
        (&["--version"], format!("kvbench {version}\n")),
        (
            &["redis-benchmark", "--version"],
            "redis-benchmark (kvbench ".to_string(),
        ),
        (
            &["latency", "--version"],
            format!("kvbench latency {version}\n"),
        ),
        (&["latency", "-V"], format!("kvbench latency {version}\n")),
        (
            &["intrinsic-latency", "--version"],
            format!("kvbench intrinsic-latency {version}\n"),
        ),
        (
            &["merge", "--version"],
            format!("kvbench merge {version}\n"),
        ),
        (
            &["report", "--version"],
            format!("kvbench report {version}\n"),
        ),
        (
            &["completions", "--version"],
            format!("kvbench completions {version}\n"),
        ),
    ];
    for (args, want) in cases {
        let run = kvbench(args).ok();
        assert!(
            run.stdout_text().starts_with(&want),
            "{args:?}: {}",
            run.describe()
        );
        assert!(run.stderr_text().is_empty(), "{args:?}: {}", run.describe());
    }
    let man = kvbench(&["man", "--version"]).ok();
    assert_eq!(man.stdout_text(), format!("kvbench man {version}\n"));
}
