//! `--print-percentiles` lists (`50,99,99.9`): the one parser for every front end that
//! takes one, with memtier's message for a bad list.

use crate::error::Error;

/// `50,99,99.9` -> `[50.0, 99.0, 99.9]`; each value must lie in 0-100. A repeat
/// (`50,50.0`) is kept once: it would name one column, or JSON key, twice.
pub fn parse_percentiles(raw: &str) -> Result<Vec<f64>, Error> {
    let mut list: Vec<f64> = Vec::new();
    for p in raw.split(',') {
        match p.trim().parse::<f64>() {
            Ok(x) if (0.0..=100.0).contains(&x) => {
                if !list.contains(&x) {
                    list.push(x);
                }
            }
            _ => {
                return Err(Error::usage(
                    "quantiles must be expressed as [0.0-100.0],[0.0-100.0](,...).",
                ));
            }
        }
    }
    Ok(list)
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
            let e = parse_percentiles(bad).unwrap_err();
            assert_eq!(
                e,
                Error::usage("quantiles must be expressed as [0.0-100.0],[0.0-100.0](,...).")
            );
        }
    }
}
