//! The page's configuration section: one run's settings, or the settings that differ
//! between several runs side by side, with every setting in a collapsed table.

use std::fmt::Write as _;

use super::escape;
use super::model::Run;
use super::section::swatch;

/// The configuration: one run's settings in columns; for several, the settings that differ
/// side by side, and every setting in a collapsed table.
pub fn render_configuration(out: &mut String, runs: &[Run], labels: &[String]) {
    if runs.iter().all(|r| r.config.is_empty()) {
        return;
    }
    out.push_str("<section id=\"configuration\">\n<h2>Configuration</h2>\n");
    if let [run] = runs {
        out.push_str("<div class=\"kv\">\n");
        for (key, value) in &run.config {
            let _ = writeln!(
                out,
                "<div><span class=\"k\">{}</span><span class=\"v\">{}</span></div>",
                escape(key),
                escape(value)
            );
        }
        out.push_str("</div>\n</section>\n");
        return;
    }

    let mut keys: Vec<&str> = Vec::new();
    for (key, _) in runs.iter().flat_map(|r| &r.config) {
        if !keys.contains(&key.as_str()) {
            keys.push(key);
        }
    }
    fn value<'a>(run: &'a Run, key: &str) -> Option<&'a str> {
        run.config
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
    let differs = |key: &str| runs.iter().any(|r| value(r, key) != value(&runs[0], key));
    let header = |out: &mut String| {
        // Scrolls on its own when many runs make it wider than the page.
        out.push_str("<div class=\"wide\"><table class=\"config\"><thead><tr><th>Setting</th>");
        for (i, label) in labels.iter().enumerate() {
            let _ = write!(out, "<th>{}{}</th>", swatch(i), escape(label));
        }
        out.push_str("</tr></thead>\n<tbody>\n");
    };
    let line = |out: &mut String, key: &str| {
        let class = if differs(key) {
            " class=\"differs\""
        } else {
            ""
        };
        let _ = write!(out, "<tr><td class=\"key\">{}</td>", escape(key));
        for run in runs {
            let _ = write!(
                out,
                "<td{class}>{}</td>",
                escape(value(run, key).unwrap_or("—"))
            );
        }
        out.push_str("</tr>\n");
    };

    let differing: Vec<&str> = keys.iter().copied().filter(|k| differs(k)).collect();
    if differing.is_empty() {
        out.push_str("<p class=\"note\">Every setting is the same in all runs.</p>\n");
    } else {
        let _ = writeln!(
            out,
            "<p class=\"note\">{} setting{} differ{}:</p>",
            differing.len(),
            if differing.len() == 1 { "" } else { "s" },
            if differing.len() == 1 { "s" } else { "" }
        );
        header(out);
        for key in &differing {
            line(out, key);
        }
        out.push_str("</tbody></table></div>\n");
    }
    let _ = writeln!(
        out,
        "<details><summary>All {} settings</summary>",
        keys.len()
    );
    header(out);
    for key in &keys {
        line(out, key);
    }
    out.push_str("</tbody></table></div>\n</details>\n</section>\n");
}
