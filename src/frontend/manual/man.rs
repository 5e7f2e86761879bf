//! `kvbench man`: kvbench's manual page in roff, every tool in one page (`docs/kvbench.1`
//! is this output; `make man` writes it, a test keeps it current).
//!
//! ```text
//! .TH KVBENCH 1                       title
//! NAME, SYNOPSIS, DESCRIPTION         kvbench as a whole, the list of tools (written here)
//! one .SH per tool                    its synopsis, description and flags: clap_mangen's
//!                                     sections of the tool's clap command, as subsections,
//!                                     each flag's aliases added as --help shows them; or
//!                                     the tool's own help text (redis-benchmark, zbench)
//! ```

use std::ffi::OsString;
use std::io::Write;

use clap::error::ErrorKind;
use clap::{Arg, Command, CommandFactory, FromArgMatches, Id, Parser};
use clap_mangen::Man;

use super::{Tool, tools};
use crate::console::print_now;
use crate::error::Error;
use crate::frontend::common::usage::one_line;

#[derive(Parser, Debug)]
#[command(
    name = "kvbench man",
    bin_name = "kvbench man",
    about = "Print kvbench's manual page (roff): every tool and its flags.",
    version = env!("CARGO_PKG_VERSION"),
    after_help = "Read it with `kvbench man | man -l -`; `make install` installs it as \
                  kvbench(1)."
)]
struct Flags {}

/// The clap command, for `--help`, completions and the man page.
pub fn command() -> clap::Command {
    Flags::command()
}

const NAME: &str = "kvbench \\- load generator for Redis and memcached that speaks \
memtier_benchmark's, redis\\-benchmark's, redis\\-cli's latency and redis\\-zbench\\-go's \
command lines";

const SYNOPSIS: &str = ".B kvbench
[\\fIoptions\\fR]
.br
.B kvbench
\\fItool\\fR [\\fIoptions\\fR] [\\fIarguments\\fR]
.br
.B memtier_benchmark
[\\fIoptions\\fR]    (a link named after a tool runs that tool)
";

const DESCRIPTION: &str = "kvbench is one binary with several command lines. The first \
argument picks the tool when it names one; otherwise the name kvbench was started under does \
(a link named \\fBmemtier_benchmark\\fR); otherwise it is memtier_benchmark's command line, \
kvbench's default. Each tool parses its own flags, and a bad flag is one line on stderr and \
exit status 1.";

/// Roff text for `text` in running prose: backslashes and hyphens escaped, and a line
/// that would start with a control character made literal.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for line in text.split('\n') {
        if !out.is_empty() {
            out.push('\n');
        }
        if line.starts_with(['.', '\'']) {
            out.push_str("\\&");
        }
        for c in line.chars() {
            match c {
                '\\' => out.push_str("\\e"),
                '-' => out.push_str("\\-"),
                c => out.push(c),
            }
        }
    }
    out
}

/// One clap_mangen section of `man` as text, its `.SH` headings made `.SS` (the tool's
/// own `.SH` holds them).
fn subsections(
    man: &Man,
    render: fn(&Man, &mut dyn Write) -> std::io::Result<()>,
) -> Result<String, Error> {
    let mut buf = Vec::new();
    render(man, &mut buf).map_err(|e| Error::run(format!("cannot render the manual: {e}")))?;
    let text = String::from_utf8_lossy(&buf).into_owned();
    Ok(text
        .lines()
        // Each rendering repeats roff's apostrophe set-up; the page writes it once.
        .filter(|l| !l.starts_with(".ie \\n(.g .ds Aq") && !l.starts_with(".el .ds Aq"))
        .map(|l| match l.strip_prefix(".SH ") {
            // clap_mangen calls the after-help text EXTRA.
            Some("EXTRA") => ".SS NOTES\n".to_string(),
            Some(rest) => format!(".SS {rest}\n"),
            None => format!("{l}\n"),
        })
        .collect())
}

/// The page's first lines: roff's apostrophe string (clap_mangen's text uses `\*(Aq`) and
/// the title. No date, so the page is the same bytes for the same build.
fn title() -> String {
    format!(
        ".ie \\n(.g .ds Aq \\(aq\n.el .ds Aq '\n.TH KVBENCH 1 \"\" \"kvbench {}\" \"kvbench manual\"\n",
        env!("CARGO_PKG_VERSION")
    )
}

/// The note clap's `--help` puts after an argument's help for its visible aliases
/// (`[alias: --pass]`, `[aliases: -s, --server]`), or `None` for an argument without any.
fn alias_note(arg: &Arg) -> Option<String> {
    let shorts = arg.get_visible_short_aliases().unwrap_or_default();
    let longs = arg.get_visible_aliases().unwrap_or_default();
    let names: Vec<String> = shorts
        .iter()
        .map(|c| format!("-{c}"))
        .chain(longs.iter().map(|l| format!("--{l}")))
        .collect();
    match names.len() {
        0 => None,
        1 => Some(format!("[alias: {}]", names[0])),
        _ => Some(format!("[aliases: {}]", names.join(", "))),
    }
}

/// `cmd` with each argument's alias note added to its help texts: clap_mangen leaves
/// aliases out, and a spelling that `--help` lists (`kvbench -s HOST`, `kvbench latency
/// --latency-history`) must be in the manual too.
fn with_aliases(cmd: Command) -> Command {
    let notes: Vec<(Id, String)> = cmd
        .get_arguments()
        .filter_map(|a| alias_note(a).map(|note| (a.get_id().clone(), note)))
        .collect();
    notes.into_iter().fold(cmd, |cmd, (id, note)| {
        cmd.mut_arg(id, |arg| {
            let short = arg.get_help().map(|h| format!("{h} {note}"));
            let long = arg.get_long_help().map(|h| format!("{h} {note}"));
            let arg = match short {
                Some(help) => arg.help(help),
                None => arg.help(note.clone()),
            };
            match long {
                Some(help) => arg.long_help(help),
                None => arg,
            }
        })
    })
}

fn tool_section(out: &mut String, tool: &Tool) -> Result<(), Error> {
    out.push_str(&format!(
        ".SH \"KVBENCH {}\"\n",
        tool.name.to_uppercase().replace('-', "\\-")
    ));
    if !tool.wired() {
        out.push_str(&format!(
            ".PP\n\\fINot available in this build yet\\fR: its flags are defined and tested, \
             and \\fBkvbench {}\\fR runs it once its front end is wired.\n",
            escape(tool.name)
        ));
    }
    let man = Man::new(with_aliases(tool.command.clone()));
    out.push_str(&subsections(&man, Man::render_synopsis_section)?);
    out.push_str(&subsections(&man, Man::render_description_section)?);
    match &tool.help_text {
        Some(help) => {
            out.push_str(".SS OPTIONS\n.nf\n");
            out.push_str(&escape(help.trim_end()));
            out.push_str("\n.fi\n");
        }
        None => {
            if tool.command.get_arguments().any(|a| !a.is_hide_set()) {
                out.push_str(&subsections(&man, Man::render_options_section)?);
            }
            if tool.command.get_after_help().is_some() {
                out.push_str(&subsections(&man, Man::render_extra_section)?);
            }
        }
    }
    Ok(())
}

/// The whole page.
pub fn page() -> Result<String, Error> {
    let tools = tools();
    let mut out = title();
    out.push_str(".SH NAME\n");
    out.push_str(NAME);
    out.push_str("\n.SH SYNOPSIS\n");
    out.push_str(SYNOPSIS);
    out.push_str(".SH DESCRIPTION\n");
    out.push_str(DESCRIPTION);
    out.push_str("\n.PP\nThe tools:\n");
    for tool in &tools {
        out.push_str(&format!(
            ".TP\n\\fBkvbench {}\\fR\n{}{}\n",
            escape(tool.name),
            escape(tool.summary),
            if tool.wired() {
                ""
            } else {
                " (not available in this build yet)"
            }
        ));
    }
    out.push_str(
        ".PP\nEach tool's section below lists its flags. The documentation in the \
         source tree's docs/ folder says more: docs/output.md (every output file), \
         docs/report.md, docs/prometheus.md, docs/latency.md, docs/redis\\-benchmark.md, \
         docs/zbench.md, docs/distributed.md.\n",
    );
    for tool in &tools {
        tool_section(&mut out, tool)?;
    }
    out.push_str(
        ".SH \"EXIT STATUS\"\n0 success; 1 a bad flag, an unreachable server, a connection \
         lost mid\\-run, a garbage reply or a file that cannot be read or written; 130, 143 and \
         129 stopped by SIGINT, SIGTERM and SIGHUP (results so far written); 141 standard \
         output's reader gone (\\fBkvbench ... | head\\fR): the memtier front end, \\fBmerge\\fR, \
         \\fBlatency\\fR, \\fBintrinsic\\-latency\\fR and \\fBzbench\\fR end silently, every \
         result file still written whole (\\fBzbench\\fR stops its run at the first line its \
         reader did not take); \\fBredis\\-benchmark\\fR runs its tests to the end, as \
         redis\\-benchmark does.\n",
    );
    Ok(ascii_only(&out))
}

/// Every character beyond ASCII as groff's `\[uXXXX]`, so the page reads the same
/// whatever input encoding a formatter assumes.
fn ascii_only(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            out.push_str(&format!("\\[u{:04X}]", u32::from(c)));
        }
    }
    out
}

/// Runs `kvbench man` with its argv (the first item is the program name).
pub fn main(args: Vec<OsString>) -> Result<u8, Error> {
    let matches = match Flags::command().try_get_matches_from(args) {
        Ok(m) => m,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            print_now(&e.to_string());
            return Ok(0);
        }
        Err(e) => return Err(one_line(&e)),
    };
    Flags::from_arg_matches(&matches).map_err(|e| one_line(&e))?;
    let page = page()?;
    let mut out = std::io::stdout().lock();
    out.write_all(page.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| Error::run(format!("cannot write the manual: {e}")))?;
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_makes_prose_literal() {
        assert_eq!(escape("a-b \\n"), "a\\-b \\en");
        assert_eq!(escape(".TH x\n'quote"), "\\&.TH x\n\\&'quote");
    }

    #[test]
    fn the_page_has_every_tool_and_its_flags() {
        let page = page().unwrap();
        // clap_mangen may put groff's quote-string set-up (`.ie \n(.g ...`) first.
        assert!(
            page.contains("\n.TH KVBENCH 1") || page.starts_with(".TH KVBENCH 1"),
            "{:.200}",
            page
        );
        for tool in tools() {
            let heading = format!(
                ".SH \"KVBENCH {}\"",
                tool.name.to_uppercase().replace('-', "\\-")
            );
            assert!(page.contains(&heading), "{heading}");
        }
        for flag in ["ratio", "prometheus\\-port", "out\\-file", "key\\-pattern"] {
            assert!(page.contains(flag), "{flag}");
        }
        // redis-benchmark's own help layout, literally.
        assert!(page.contains("Usage: kvbench redis\\-benchmark"), "rb help");
        // zbench's Go-style flags, as its --help spells them, never clap's `--a`.
        assert!(
            page.contains("Usage of kvbench zbench:\n  \\-a string"),
            "zbench help"
        );
        assert!(!page.contains("\\fB\\-\\-a\\fR"), "zbench flag spelt --a");
        // Aliases, as --help lists them: memtier's -s and redis-cli's spellings.
        for alias in [
            "[aliases: \\-s, \\-\\-server]",
            "[alias: \\-\\-latency\\-history]",
            "[alias: \\-\\-latency\\-dist]",
            "[alias: \\-\\-pass]",
            "[alias: \\-s]",
        ] {
            assert!(page.contains(alias), "{alias}");
        }
        assert!(
            !page.contains("\n.SH OPTIONS"),
            "a tool's .SH left unnested"
        );
        assert!(page.is_ascii());
        assert_eq!(ascii_only("a … µ"), "a \\[u2026] \\[u00B5]");
    }
}
