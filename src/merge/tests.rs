//! Tests of merging against memtier_benchmark's and kvbench's real result files.
