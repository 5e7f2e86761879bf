//! How the HTML report prints numbers: rates with thousands separators, latencies in ms,
//! ratios to the baseline run.

use crate::report::finite;

/// A rate with two decimals and thousands separated by commas: `22,362.61`.
pub fn rate_text(x: f64) -> String {
    let fixed = format!("{:.2}", finite(x));
    let (int, frac) = fixed.split_once('.').unwrap_or((&fixed, ""));
    let (sign, digits) = match int.strip_prefix('-') {
        Some(d) => ("-", d),
        None => ("", int),
    };
    let mut out = String::with_capacity(fixed.len() + digits.len() / 3);
    out.push_str(sign);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if !frac.is_empty() {
        out.push('.');
        out.push_str(frac);
    }
    out
}

/// A latency in milliseconds with microsecond resolution (what the histograms hold).
pub fn ms_text(x: f64) -> String {
    format!("{:.3}", finite(x))
}

/// `value / base` as `1.23×`, or `None` when there is no meaningful ratio (a zero or
/// missing baseline).
pub fn ratio(value: f64, base: f64) -> Option<f64> {
    (base.is_finite() && value.is_finite() && base != 0.0).then(|| value / base)
}

/// A ratio as the table prints it: `1.23×`.
pub fn ratio_text(r: f64) -> String {
    format!("{r:.2}×")
}

/// A count as the tables print it: grouped like a rate, without the `.00`.
pub fn count_text(x: f64) -> String {
    let s = rate_text(x);
    s.strip_suffix(".00").map_or(s.clone(), str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_group_thousands() {
        assert_eq!(rate_text(22362.614), "22,362.61");
        assert_eq!(rate_text(999.999), "1,000.00");
        assert_eq!(rate_text(0.0), "0.00");
        assert_eq!(rate_text(1234567.0), "1,234,567.00");
        assert_eq!(rate_text(-1234.5), "-1,234.50");
        assert_eq!(rate_text(f64::NAN), "0.00");
    }

    #[test]
    fn latencies_and_ratios() {
        assert_eq!(ms_text(0.087), "0.087");
        assert_eq!(ms_text(f64::INFINITY), "0.000");
        assert_eq!(ratio(2.0, 4.0), Some(0.5));
        assert_eq!(ratio(2.0, 0.0), None);
        assert_eq!(ratio_text(1.2345), "1.23×");
    }
}
