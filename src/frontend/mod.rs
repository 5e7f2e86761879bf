//! The command lines kvbench speaks, one folder per tool.

pub mod merge;
