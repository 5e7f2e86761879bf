//! memtier's arbitrary-command flags validated: `--command` (with `--command-ratio` and
//! `--command-key-pattern`), MONITOR replay (`--monitor-input`, `--monitor-pattern`),
//! `--command-stats-breakdown` and SCAN iteration. With any of them they replace the
//! SET/GET workload, as in memtier.

use std::path::Path;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::frontend::memtier::cli::Cli;
use crate::frontend::memtier::commands::{
    enable_scan_iteration, parse_breakdown, parse_commands, parse_monitor_pattern,
};
use crate::plan::Arbitrary;
use crate::protocol::Protocol;
use crate::workload::commands::MonitorInput;
use crate::workload::keys::KeyPattern;

/// Most report rows a `--command` workload may have.
const MAX_ROWS: usize = 255;

/// The arbitrary-command workload of `cli`: `None` when no `--command` was given (and
/// no flag that needs one).
pub fn from_cli(cli: &Cli, protocol: Protocol, pipeline: usize) -> Result<Option<Arc<Arbitrary>>> {
    let usage = |m: String| Error::usage(m);
    if cli.commands.is_empty() {
        let needs_command = [
            (cli.monitor_input.is_some(), "--monitor-input"),
            (cli.monitor_pattern.is_some(), "--monitor-pattern"),
            (
                cli.command_stats_breakdown.is_some(),
                "--command-stats-breakdown",
            ),
            (
                cli.scan_incremental_iteration,
                "--scan-incremental-iteration",
            ),
            (
                cli.scan_incremental_max_iterations.is_some(),
                "--scan-incremental-max-iterations",
            ),
        ];
        if let Some((_, flag)) = needs_command.iter().find(|(given, _)| *given) {
            return Err(usage(format!("{flag} needs at least one --command.")));
        }
        return Ok(None);
    }
    if protocol.is_memcache() {
        return Err(usage(
            "--command sends Redis commands; it cannot be used with the memcache protocols."
                .to_string(),
        ));
    }
    let monitor = match cli.monitor_input.as_deref() {
        Some(path) => Some(Arc::new(
            MonitorInput::load(Path::new(path)).map_err(usage)?,
        )),
        None => None,
    };
    let monitor_pattern = parse_monitor_pattern(cli.monitor_pattern.as_deref()).map_err(usage)?;
    let by_line = parse_breakdown(cli.command_stats_breakdown.as_deref()).map_err(usage)?;
    let mut list = parse_commands(&cli.commands, by_line, monitor.as_deref()).map_err(usage)?;
    // memtier's checks, in its words: the SET/GET flags have --command twins, and the
    // parallel pattern splits the key range between commands only if all take part.
    if !list.is_empty() {
        if cli.key_pattern.is_some() {
            return Err(usage(
                "when using arbitrary command, key pattern is configured with --command-key-pattern option."
                    .to_string(),
            ));
        }
        if cli.ratio.is_some() {
            return Err(usage(
                "when using arbitrary command, ratio is configured with --command-ratio option."
                    .to_string(),
            ));
        }
        let parallel = list
            .commands
            .iter()
            .filter(|c| c.key_pattern == KeyPattern::Parallel)
            .count();
        if parallel > 0 && parallel < list.commands.len() {
            return Err(usage(
                "parallel key-pattern must be configured to all commands.".to_string(),
            ));
        }
    }
    let scan_max_iterations = if cli.scan_incremental_iteration {
        if pipeline != 1 {
            return Err(usage(
                "--scan-incremental-iteration requires --pipeline=1.".to_string(),
            ));
        }
        enable_scan_iteration(&mut list).map_err(usage)?;
        let max = match cli.scan_incremental_max_iterations.as_deref() {
            Some(raw) => raw.parse::<u32>().map_err(|_| {
                usage(format!(
                    "--scan-incremental-max-iterations must be a number, got '{raw}'."
                ))
            })?,
            None => 0,
        };
        Some(max)
    } else {
        if cli.scan_incremental_max_iterations.is_some() {
            return Err(usage(
                "--scan-incremental-max-iterations needs --scan-incremental-iteration.".to_string(),
            ));
        }
        None
    };
    // Rows are numbered in one byte per request in flight.
    if list.rows.len() > MAX_ROWS {
        return Err(usage(format!(
            "{} report rows (commands or captured command types) is more than the {MAX_ROWS} kvbench supports.",
            list.rows.len()
        )));
    }
    if let Some(m) = &monitor {
        eprintln_safe!("{}", m.summary());
    }
    Ok(Some(Arc::new(Arbitrary {
        list,
        monitor,
        monitor_pattern,
        scan_max_iterations,
    })))
}
