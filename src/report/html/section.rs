//! Pieces several parts of the page share: a run's colour swatch and a section of charts.

use std::fmt::Write as _;

use super::escape;
use super::svg::{self, Chart, PALETTE};

/// The small square in a run's colour that labels it in tables and headings.
pub fn swatch(i: usize) -> String {
    format!(
        "<span class=\"swatch\" style=\"background:{}\"></span>",
        PALETTE[svg::series_colour(i)]
    )
}

/// A titled section of charts with a note, or a line saying the results have no data for
/// it.
pub fn render_chart_section(
    out: &mut String,
    id: &str,
    heading: &str,
    note: &str,
    charts: &[Chart],
) {
    let _ = writeln!(out, "<section id=\"{id}\">\n<h2>{}</h2>", escape(heading));
    if charts.is_empty() {
        out.push_str(
            "<p class=\"note\">These results carry no data for this view.</p>\n</section>\n",
        );
        return;
    }
    let _ = writeln!(
        out,
        "<p class=\"note\">{}</p>\n<div class=\"charts\">",
        escape(note)
    );
    for chart in charts {
        out.push_str("<figure class=\"chart\">\n");
        out.push_str(&svg::render(chart));
        out.push_str("\n</figure>\n");
    }
    out.push_str("</div>\n</section>\n");
}
