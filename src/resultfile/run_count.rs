//! How many runs (`-x N`) a results block's figures stand for: an `-x N` file's
//! aggregate, or a merged file's, whose `"run_count"` says what its inputs were (one
//! number when they agreed, an array of each input's when they did not). `kvbench merge`
//! and the HTML report say so beside figures that mix several runs.

use crate::resultfile::ordered::Json;
use crate::resultfile::{Block, BlockKind, JsonResult};

/// The runs behind a block's figures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunCount {
    /// One count: 1, `-x N`'s aggregate, or a merge of inputs of N runs each.
    Runs(u64),
    /// A merge of inputs of different run counts: each input's name (its
    /// `"merged_from"` entry) and its runs.
    PerInput(Vec<(String, u64)>),
}

impl RunCount {
    /// The runs of every input together.
    pub fn total(&self) -> u64 {
        match self {
            RunCount::Runs(n) => *n,
            RunCount::PerInput(inputs) => inputs.iter().map(|(_, n)| n).sum(),
        }
    }

    /// `1 run`, `3 runs`.
    pub fn runs_text(n: u64) -> String {
        format!("{n} run{}", if n == 1 { "" } else { "s" })
    }
}

impl JsonResult {
    /// The runs `block` (one of this file's) stands for: N for `AGGREGATED AVERAGE
    /// RESULTS (N runs)`; for a merged file's block (its configuration has
    /// `"merged_from"`), its `"run_count"`, each input's where they differed; else 1 (an
    /// `ALL STATS` is one run whatever `run_count` says).
    pub fn runs_behind(&self, block: &Block) -> RunCount {
        if let BlockKind::Aggregated(n) = block.kind {
            return RunCount::Runs(u64::from(n));
        }
        // The last: a merge of merged files also holds its inputs' `merged_from`.
        let entry = |key: &str| {
            self.configuration
                .iter()
                .rev()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v)
        };
        let (Some(names), Some(counts)) = (entry("merged_from"), entry("run_count")) else {
            return RunCount::Runs(1);
        };
        match (names, counts) {
            (Json::Array(names), Json::Array(counts)) if names.len() == counts.len() => {
                let inputs: Vec<(String, u64)> = names
                    .iter()
                    .zip(counts)
                    .enumerate()
                    .map(|(i, (name, count))| {
                        let name = name
                            .as_str()
                            .map_or_else(|| format!("input {}", i + 1), str::to_string);
                        (name, runs_in(count))
                    })
                    .collect();
                match inputs.first() {
                    Some((_, first)) if inputs.iter().all(|(_, n)| n == first) => {
                        RunCount::Runs(*first)
                    }
                    _ => RunCount::PerInput(inputs),
                }
            }
            (_, counts) => RunCount::Runs(runs_in(counts)),
        }
    }
}

/// The runs a `"run_count"` value stands for: its number; a merged input's array (its
/// own inputs' counts) adds up; an input without one (`null`) ran once.
fn runs_in(value: &Json) -> u64 {
    match value {
        Json::Array(values) => values.iter().map(runs_in).sum(),
        other => other.as_u64().unwrap_or(1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resultfile::{ConfigFacts, RunInformation, Runtime};

    fn block(kind: BlockKind) -> Block {
        Block {
            title: String::new(),
            kind,
            runtime: Runtime::default(),
            rows: Vec::new(),
            servers: Vec::new(),
            visibility: None,
            unfinished: None,
            schedule: None,
            distributions: Vec::new(),
        }
    }

    fn file(configuration: &[(&str, Json)]) -> JsonResult {
        JsonResult {
            configuration: configuration
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
            config: ConfigFacts::default(),
            run_info: RunInformation::default(),
            blocks: Vec::new(),
            rate_steps: None,
        }
    }

    fn names(names: &[&str]) -> Json {
        Json::Array(names.iter().map(|n| Json::String(n.to_string())).collect())
    }

    #[test]
    fn an_aggregate_is_its_runs_and_a_lone_run_one() {
        let plain = file(&[("run_count", Json::Uint(3))]);
        assert_eq!(
            plain.runs_behind(&block(BlockKind::Aggregated(3))),
            RunCount::Runs(3)
        );
        // Not merged: ALL STATS is one run whatever the configuration says.
        assert_eq!(
            plain.runs_behind(&block(BlockKind::AllStats)),
            RunCount::Runs(1)
        );
    }

    #[test]
    fn a_merge_says_its_inputs_runs() {
        let all = block(BlockKind::AllStats);
        let agreed = file(&[
            ("run_count", Json::Uint(3)),
            ("merged_from", names(&["a.json", "b.json"])),
        ]);
        assert_eq!(agreed.runs_behind(&all), RunCount::Runs(3));
        let mixed = file(&[
            (
                "run_count",
                Json::Array(vec![Json::Uint(3), Json::Uint(2), Json::Null]),
            ),
            ("merged_from", names(&["x3.json", "x2.json", "one.json"])),
        ]);
        let runs = mixed.runs_behind(&all);
        assert_eq!(
            runs,
            RunCount::PerInput(vec![
                ("x3.json".to_string(), 3),
                ("x2.json".to_string(), 2),
                ("one.json".to_string(), 1)
            ])
        );
        assert_eq!(runs.total(), 6);
        // A merge of that merge with an -x 2 file: the first input's own inputs add up.
        let nested = file(&[
            (
                "run_count",
                Json::Array(vec![
                    Json::Array(vec![Json::Uint(3), Json::Uint(2)]),
                    Json::Uint(2),
                ]),
            ),
            ("merged_from", names(&["inner.json"])),
            ("merged_from", names(&["m.json", "x2.json"])),
        ]);
        assert_eq!(
            nested.runs_behind(&all),
            RunCount::PerInput(vec![("m.json".to_string(), 5), ("x2.json".to_string(), 2)])
        );
        assert_eq!(RunCount::runs_text(1), "1 run");
        assert_eq!(RunCount::runs_text(5), "5 runs");
    }
}
