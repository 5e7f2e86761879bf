//! The redis-benchmark front end: redis-benchmark 7.x's command line and output, over
//! kvbench's engine.
//!
//! ```text
//! argv -> flags (clap, validated) -> BenchmarkSpec
//! BenchmarkSpec -> suite (tests as request templates with __rand_int__ / {tag} fields)
//!               -> plan (one engine plan per test: a shared -n budget over -c clients)
//! engine results per test -> render (normal block, -q, --csv, live line)
//!                              latency (redis-benchmark's histogram walks and rounding)
//! ```
//!
//! | module | its one job |
//! | --- | --- |
//! | [`run`] | `main`: the servers asked, the tests run one by one, output, exit status |
//! | [`flags`] | every redis-benchmark flag (and kvbench's additions) into a [`flags::BenchmarkSpec`] |
//! | [`uri`] | the `-u redis://` / `rediss://` URI |
//! | `numbers` | integer flag values, at least 1, and `--rps`'s rate |
//! | [`help`] | the `--help` and `--version` texts |
//! | [`suite`] | the default suite, `-t`, arbitrary commands, placeholders and cluster slot tags |
//! | [`plan`] | the spec and a test into the engine's plan (server part, load, template) |
//! | [`server_info`] | `CONFIG GET save/appendonly` and the masters' node IDs, before the tests |
//! | [`live`] | the live line and `-I`'s `clients:` status, as the engine's observer |
//! | [`latency`] | redis-benchmark's histogram layout, walks and summary figures |
//! | [`render`] | redis-benchmark's text: blocks, `-q` lines, CSV, live line, banners |
//! | [`outputs`] | `--json-out-file` and `--hdr-file-prefix`: the tests as rows of one block |

pub mod flags;
pub mod help;
pub mod latency;
pub mod live;
mod numbers;
pub mod outputs;
pub mod plan;
pub mod render;
pub mod run;
pub mod server_info;
pub mod suite;
pub mod tls_flags;
pub mod uri;
mod whole_words;

pub use run::main;

use flags::BenchmarkSpec;
use suite::{PayloadGenerator, SuiteParams, Test, arbitrary_test, default_suite};

/// The tests one pass of a run executes, in order: the command given on the command line,
/// or the default tests `-t` selects, their values the next `-d` bytes of `payload` (so
/// each `-l` pass gets fresh bytes, as in redis-benchmark).
pub fn tests_for(spec: &BenchmarkSpec, payload: &mut PayloadGenerator) -> Vec<Test> {
    let randomize = spec.keyspace.is_some();
    match &spec.command {
        Some(args) => {
            let shown = args.len() - usize::from(spec.last_arg_from_stdin);
            vec![arbitrary_test(args, shown, randomize, spec.cluster)]
        }
        None => {
            let params = SuiteParams {
                randomize,
                cluster: spec.cluster,
                selection: &spec.tests,
            };
            default_suite(params, &payload.next_payload(spec.data_size))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flags::{Parsed, parse};

    fn spec(args: &[&str]) -> BenchmarkSpec {
        match parse(std::iter::once("redis-benchmark").chain(args.iter().copied())) {
            Ok(Parsed::Run(spec)) => *spec,
            other => panic!("{args:?}: {other:?}"),
        }
    }

    #[test]
    fn tests_for_a_command_or_the_suite() {
        let mut payload = PayloadGenerator::default();
        let tests = tests_for(&spec(&["-t", "set,lrange_100", "-d", "5"]), &mut payload);
        let titles: Vec<&str> = tests.iter().map(|t| t.title.as_str()).collect();
        assert_eq!(
            titles,
            [
                "SET",
                "LPUSH (needed to benchmark LRANGE)",
                "LRANGE_100 (first 100 elements)"
            ]
        );
        assert_eq!(tests[0].payload_bytes, 5);
        // The next pass (-l) gets the next bytes of the sequence.
        let again = tests_for(&spec(&["-t", "set", "-d", "5"]), &mut payload);
        assert_ne!(again[0].command.bytes(), tests[0].command.bytes());

        let mut s = spec(&["-r", "10", "-x", "set", "k__rand_int__"]);
        s.read_last_arg(&b"v"[..]).unwrap();
        let tests = tests_for(&s, &mut payload);
        assert_eq!(tests.len(), 1);
        assert_eq!(tests[0].title, "set k__rand_int__");
        assert_eq!(tests[0].command.rand_positions().len(), 1);
    }
}
