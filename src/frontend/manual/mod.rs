//! Every front end's command line in one clap tree, for what documents them all: shell
//! completions (`kvbench completions`) and the man page (`kvbench man`, `docs/kvbench.1`).
//!
//! ```text
//! each front end's clap Command (wired or not) -> tools() -> kvbench_command()
//!     -> completions: clap_complete for bash, zsh, fish
//!     -> man: clap_mangen sections, one per tool, in one page
//! ```
//!
//! | module | its one job |
//! | --- | --- |
//! | this file | the list of tools and the command tree |
//! | [`completions`] | `kvbench completions SHELL` |
//! | [`man`] | `kvbench man`: the page in roff |
//!
//! A tool whose front end is not in [`super::FRONT_ENDS`] yet is still listed (its flags are
//! defined and tested), and the page says it is not available in this build.

pub mod completions;
pub mod man;

use clap::Command;

use super::{
    FRONT_ENDS, intrinsic_latency, latency, memtier, merge, redis_benchmark, report, zbench,
};

/// One command line of kvbench as the manual and the completions list it.
pub struct Tool {
    /// The word that selects it: `kvbench NAME ...`.
    pub name: &'static str,
    /// What it does, one line.
    pub summary: &'static str,
    /// Its clap command, named `NAME`, its binary `kvbench NAME`.
    pub command: Command,
    /// Its own help text, for a tool whose --help is not clap's (redis-benchmark prints
    /// redis-benchmark's layout, zbench Go's): the manual shows it as written.
    pub help_text: Option<String>,
}

impl Tool {
    /// Whether `kvbench NAME` runs it in this build.
    pub fn wired(&self) -> bool {
        FRONT_ENDS.iter().any(|(name, _)| *name == self.name)
    }
}

fn tool(name: &'static str, summary: &'static str, command: Command) -> Tool {
    let about_missing = command.get_about().is_none();
    let mut command = command
        .name(name)
        .bin_name(format!("kvbench {name}"))
        .display_name(format!("kvbench {name}"))
        // A front end parsed on its own may skip the program name (zbench's Go-style
        // reader); as a subcommand its name is always there.
        .no_binary_name(false);
    if about_missing {
        command = command.about(summary);
    }
    Tool {
        name,
        summary,
        command,
        help_text: None,
    }
}

/// Every tool, in the order the manual lists them: memtier's command line (also kvbench's
/// default) first, then the others, then the two that document them.
pub fn tools() -> Vec<Tool> {
    let mut rb = tool(
        "redis-benchmark",
        "redis-benchmark 7.x's command line and output over kvbench's engine",
        redis_benchmark::flags::command(),
    );
    // Its clap struct carries no help text (its --help is redis-benchmark's own layout):
    // the manual shows that layout, under kvbench's words and usage line.
    rb.command = rb
        .command
        .about(rb.summary)
        .override_usage("kvbench redis-benchmark [OPTIONS] [COMMAND ARGS...]");
    rb.help_text = Some(redis_benchmark::help::help_text("kvbench redis-benchmark"));
    let mut zb = tool(
        "zbench",
        "redis-zbench-go's sorted-set load and queries; flags are Go-style: -name value, \
         -name=value or --name",
        zbench::flags::command(),
    );
    // clap knows its flags by their long names, which clap_mangen would print as `--a`,
    // `--c`: the manual shows the Go-style usage `kvbench zbench --help` prints instead.
    zb.command = zb
        .command
        .override_usage("kvbench zbench [-name value | -name=value | --name value ...]");
    zb.help_text = Some(zbench::goflag::usage_text(&zbench::flags::command()));
    vec![
        tool(
            "memtier_benchmark",
            "memtier_benchmark's command line (the default: `kvbench [options]` is the same)",
            memtier::parse::command(),
        ),
        tool(
            "intrinsic-latency",
            "the latency this machine adds, with no server (redis-cli --intrinsic-latency)",
            intrinsic_latency::flags::command(),
        ),
        tool(
            "latency",
            "a server's round-trip latency, one request every 10 ms (redis-cli --latency)",
            latency::flags::command(),
        ),
        rb,
        zb,
        tool(
            "merge",
            "several result files (the shards of one workload) into one exact result",
            merge::flags::command(),
        ),
        tool(
            "report",
            "result files rendered as one self-contained HTML page",
            report::flags::command(),
        ),
        tool(
            "completions",
            "a shell completion script for kvbench (bash, zsh, fish)",
            completions::command(),
        ),
        tool("man", "this manual page, in roff", man::command()),
    ]
}

/// kvbench's whole command line as one clap command: memtier's flags at the top (its
/// default front end) and every tool as a subcommand.
pub fn kvbench_command() -> Command {
    memtier::parse::command()
        .name("kvbench")
        .bin_name("kvbench")
        .disable_help_subcommand(true)
        .subcommands(tools().into_iter().map(|t| t.command))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_front_end_is_in_the_tree_and_the_tree_builds() {
        let tools = tools();
        for (name, _) in FRONT_ENDS {
            assert!(
                tools.iter().any(|t| t.name == *name),
                "{name} is wired but not in the manual"
            );
        }
        let mut cmd = kvbench_command();
        // clap's own consistency checks (duplicate flags, bad settings) run here.
        cmd.build();
        for t in &tools {
            let sub = cmd
                .find_subcommand(t.name)
                .unwrap_or_else(|| panic!("{} missing", t.name));
            assert_eq!(
                sub.get_bin_name(),
                Some(format!("kvbench {}", t.name).as_str())
            );
            assert!(sub.get_about().is_some(), "{} has no about", t.name);
        }
        assert!(cmd.get_arguments().any(|a| a.get_long() == Some("ratio")));
        assert!(
            cmd.get_arguments()
                .any(|a| a.get_long() == Some("prometheus-port"))
        );
        assert!(tools.iter().find(|t| t.name == "report").unwrap().wired());
    }
}
