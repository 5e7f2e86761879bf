//! `--print-percentiles` lists (`50,99,99.9`): the one parser for every front end that
//! takes one, with memtier's message for a bad list.

use crate::error::Error;

/// `50,99,99.9` -> `[50.0, 99.0, 99.9]`, in the order given and a repeat (`50,50.0`)
/// kept, as memtier keeps its list: its table prints one column per entry, the repeat's
/// too. Each value must lie in 0-100.
pub fn parse_percentile_list(raw: &str) -> Result<Vec<f64>, Error> {
    raw.split(',')
        .map(|p| match p.trim().parse::<f64>() {
            Ok(x) if (0.0..=100.0).contains(&x) => Ok(x),
            _ => Err(Error::usage(
                "quantiles must be expressed as [0.0-100.0],[0.0-100.0](,...).",
            )),
        })
        .collect()
}

/// [`parse_percentile_list`] with a repeat kept once: for everything keyed by the
/// percentile (JSON keys, StatsD names), where a repeat would name one figure twice.
pub fn parse_percentiles(raw: &str) -> Result<Vec<f64>, Error> {
    parse_percentile_list(raw).map(|list| distinct(&list))
}

/// `list` with each value once, first occurrences in order.
pub fn distinct(list: &[f64]) -> Vec<f64> {
    let mut once: Vec<f64> = Vec::with_capacity(list.len());
    for &x in list {
        if !once.contains(&x) {
            once.push(x);
        }
    }
    once
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_in_range_parse_and_others_are_memtiers_error() {
        assert_eq!(
            parse_percentiles("50, 99,99.9").unwrap(),
            [50.0, 99.0, 99.9]
        );
        assert_eq!(parse_percentiles("0,100").unwrap(), [0.0, 100.0]);
        assert_eq!(parse_percentiles("50,99,50.0,5e1").unwrap(), [50.0, 99.0]);
        for bad in ["", "50,", "101", "-1", "x", "50;99"] {
            for e in [
                parse_percentiles(bad).unwrap_err(),
                parse_percentile_list(bad).unwrap_err(),
            ] {
                assert_eq!(
                    e,
                    Error::usage("quantiles must be expressed as [0.0-100.0],[0.0-100.0](,...).")
                );
            }
        }
    }

    #[test]
    fn the_list_keeps_repeats_in_order() {
        assert_eq!(
            parse_percentile_list("50,50,99,50.0").unwrap(),
            [50.0, 50.0, 99.0, 50.0]
        );
        assert_eq!(distinct(&[99.0, 50.0, 99.0]), [99.0, 50.0]);
    }
}
