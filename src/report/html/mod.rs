//! The HTML report: one self-contained page (inline CSS and SVG, no script, nothing fetched)
//! showing one or several finished runs.
//!
//! ```text
//! front end (reads result files) -> model::Report -> page::render_page -> String (HTML)
//!                                                     charts: model -> svg::Chart -> svg::render
//! ```
//!
//! Nothing here reads a file or touches a socket: the caller fills the model and writes the
//! page where it wants it.

pub mod charts;
pub mod configuration;
pub mod model;
pub mod numbers;
pub mod open_loop;
pub mod page;
pub mod section;
pub mod servers;
pub mod stats;
pub mod svg;

pub use model::{
    Averaged, CommandLine, RateSweep, Report, Row, Run, Schedule, SecondPoint, SweepStep,
    Visibility,
};
pub use page::render_page;

/// `text` made safe anywhere in HTML or SVG text and in quoted attribute values: the five
/// markup characters as entities, control characters (which HTML forbids) as U+FFFD.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    push_escaped(&mut out, text);
    out
}

/// Appends [`escape`]`(text)` to `out`.
pub fn push_escaped(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' => out.push(c),
            c if c.is_control() => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_covers_markup_quotes_and_control_characters() {
        assert_eq!(
            escape("<a href=\"x\">Tom & 'Jerry'</a>"),
            "&lt;a href=&quot;x&quot;&gt;Tom &amp; &#39;Jerry&#39;&lt;/a&gt;"
        );
        assert_eq!(escape("a\u{0}b\u{1b}c\td\ne"), "a\u{FFFD}b\u{FFFD}c\td\ne");
        assert_eq!(escape("µs ünïcode ✓"), "µs ünïcode ✓");
        assert_eq!(escape("&amp;"), "&amp;amp;");
        assert_eq!(escape(""), "");
    }
}
