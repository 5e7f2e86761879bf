//! The `kvbench` binary: parse flags, build the config, run, map errors to exit codes.

fn main() {}
