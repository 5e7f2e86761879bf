//! The rows results are reported in: their names, and the indices of the built-in ones.
//!
//! Every per-thread `Vec<OpStats>` is indexed by row: the built-in SET/GET/WAIT rows
//! ([`SET`], [`GET`], [`WAIT`]), or one row per arbitrary command row.

/// Index of the SET row.
pub const SET: usize = 0;
/// Index of the GET row (multi-key gets and verification reads too).
pub const GET: usize = 1;
/// Index of the WAIT row.
pub const WAIT: usize = 2;
/// How many built-in rows there are.
pub const COUNT: usize = 3;

/// The name of a table row and of its histogram.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowName {
    /// Table/JSON row name: `Sets`, `Gets`, `Waits`, `Hsets`, `Totals`.
    pub row: String,
    /// Histogram name: `SET`, `GET`, `WAIT`, `HSET`; file names use it (`P_SET_command_run_1.txt`).
    pub hist: String,
    /// Whether the Hits/sec and Misses/sec cells apply (GET-like rows and Totals).
    pub has_hits: bool,
}

impl RowName {
    /// A row named `row` whose histogram is `hist`.
    pub fn new(row: &str, hist: &str, has_hits: bool) -> RowName {
        RowName {
            row: row.to_string(),
            hist: hist.to_string(),
            has_hits,
        }
    }

    /// The built-in rows, in table order: `Sets`, `Gets` (with hits), `Waits`.
    pub fn builtin() -> Vec<RowName> {
        vec![
            RowName::new("Sets", "SET", false),
            RowName::new("Gets", "GET", true),
            RowName::new("Waits", "WAIT", false),
        ]
    }

    /// The `Totals` row (histogram `FULL_RUN`), with hits when any row has them.
    pub fn totals(has_hits: bool) -> RowName {
        RowName::new("Totals", "FULL_RUN", has_hits)
    }

    /// The `n`th (from 2) row of one name (`--command-stats-breakdown=line`, a second
    /// line of one command): `Sets #2`, histogram `SET_2`, so neither its JSON key nor its
    /// HDR files are another row's.
    pub fn numbered(row: &str, hist: &str, n: usize) -> RowName {
        RowName::new(
            &format!("{row}{ROW_NUMBER}{n}"),
            &format!("{hist}{HIST_NUMBER}{n}"),
            false,
        )
    }
}

/// What comes between a numbered row's name and its number (`Sets #2`).
pub const ROW_NUMBER: &str = " #";
/// What comes between a numbered row's histogram and its number (`SET_2`).
pub const HIST_NUMBER: &str = "_";

/// `name` without its number, and the number, when it ends in `separator` and digits
/// ([`ROW_NUMBER`] or [`HIST_NUMBER`]): `("Sets", Some("2"))` for `Sets #2`.
pub fn split_number<'a>(name: &'a str, separator: &str) -> (&'a str, Option<&'a str>) {
    match name.rsplit_once(separator) {
        Some((base, n))
            if !base.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) =>
        {
            (base, Some(n))
        }
        _ => (name, None),
    }
}
