//! The page's configuration section: the arbitrary commands the runs sent, then one run's
//! settings, or the settings that differ between several runs side by side, with every
//! setting in a collapsed table.

use std::fmt::Write as _;

use super::escape;
use super::model::Run;
use super::section::swatch;

/// The configuration: the commands, if any run sent `--command`s; then one run's settings
/// in columns, or for several the settings that differ side by side, and every setting in
/// a collapsed table.
pub fn render_configuration(out: &mut String, runs: &[Run], labels: &[String]) {
    if runs
        .iter()
        .all(|r| r.config.is_empty() && r.commands.is_empty())
    {
        return;
    }
    out.push_str("<section id=\"configuration\">\n<h2>Configuration</h2>\n");
    if render_commands(out, runs, labels) {
        out.push_str("<h3>Settings</h3>\n");
    }
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

/// The runs' arbitrary commands, in the order given, each with its ratio and key pattern
/// (`—` where the source does not say): the rows of the table above (`Hsets`, `Gets`) are
/// named by the commands' first words only. With several runs, a run column says whose.
/// Returns whether there were any.
fn render_commands(out: &mut String, runs: &[Run], labels: &[String]) -> bool {
    if runs.iter().all(|r| r.commands.is_empty()) {
        return false;
    }
    let several = runs.len() > 1;
    out.push_str("<h3>Commands</h3>\n<div class=\"wide\"><table class=\"commands\">\n<thead><tr>");
    if several {
        out.push_str("<th class=\"run\">Run</th>");
    }
    out.push_str(
        "<th>#</th><th class=\"command\">Command</th><th>Ratio</th><th>Key pattern</th>\
         </tr></thead>\n",
    );
    for (i, run) in runs
        .iter()
        .enumerate()
        .filter(|(_, r)| !r.commands.is_empty())
    {
        out.push_str(if several {
            "<tbody class=\"group\">\n"
        } else {
            "<tbody>\n"
        });
        for (n, command) in run.commands.iter().enumerate() {
            out.push_str("<tr>");
            if several && n == 0 {
                let _ = write!(
                    out,
                    "<td class=\"run\" rowspan=\"{}\">{}{}</td>",
                    run.commands.len(),
                    swatch(i),
                    escape(&labels[i])
                );
            }
            let _ = writeln!(
                out,
                "<td>{}</td><td class=\"command\">{}</td><td>{}</td><td>{}</td></tr>",
                n + 1,
                escape(&command.command),
                command
                    .ratio
                    .map_or_else(|| "—".to_string(), |r| r.to_string()),
                escape(command.key_pattern.as_deref().unwrap_or("—"))
            );
        }
        out.push_str("</tbody>\n");
    }
    out.push_str("</table></div>\n");
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::html::model::CommandLine;

    fn with_commands(label: &str, commands: &[(&str, Option<u64>, Option<&str>)]) -> Run {
        Run {
            label: label.to_string(),
            config: vec![("threads".to_string(), "1".to_string())],
            commands: commands
                .iter()
                .map(|&(command, ratio, key_pattern)| CommandLine {
                    command: command.to_string(),
                    ratio,
                    key_pattern: key_pattern.map(str::to_string),
                })
                .collect(),
            ..Run::default()
        }
    }

    fn section(runs: &[Run]) -> String {
        let labels: Vec<String> = runs.iter().map(|r| r.label.clone()).collect();
        let mut out = String::new();
        render_configuration(&mut out, runs, &labels);
        out
    }

    #[test]
    fn commands_come_first_in_order_escaped_and_named_by_run() {
        let hset = ("hset __key__ f <x&y>", Some(2), Some("S (sequential)"));
        let html = section(&[with_commands("a", &[hset, ("ping", None, None)])]);
        assert!(html.contains(
            "<tr><td>1</td><td class=\"command\">hset __key__ f &lt;x&amp;y&gt;</td><td>2</td>\
             <td>S (sequential)</td></tr>\n<tr><td>2</td><td class=\"command\">ping</td>\
             <td>—</td><td>—</td></tr>"
        ));
        assert!(html.find("<h3>Commands</h3>") < html.find("<h3>Settings</h3>"));
        assert!(
            !html.contains("<th class=\"run\">"),
            "one run needs no run column"
        );

        // Several runs: a run column, its cell spanning the run's commands; a run without
        // commands has no lines.
        let html = section(&[
            with_commands("a", &[hset, ("ping", None, None)]),
            with_commands("b", &[]),
            with_commands("c", &[("get __key__", Some(1), Some("R (random)"))]),
        ]);
        assert_eq!(
            html.matches("<tbody class=\"group\">").count(),
            2,
            "a and c"
        );
        assert!(html.contains("rowspan=\"2\">"), "{html}");
        assert!(html.contains("rowspan=\"1\">"), "{html}");
        assert!(!html.contains("</span>b</td>"), "{html}");

        // No commands: no heading for them, and the settings need none either.
        let html = section(&[with_commands("a", &[])]);
        assert!(!html.contains("<h3>"), "{html}");
    }
}
