//! memtier's "configuration": every option with its effective value, in memtier's order
//! and spelling, for the JSON "configuration" object and `--show-config`.

use std::path::{Path, PathBuf};

use crate::frontend::common::Family;
use crate::frontend::common::distributed::epoch_seconds_text;
use crate::frontend::common::uri::masked_uri;
use crate::frontend::memtier::cli::Cli;
use crate::frontend::memtier::outputs::OutputConfig;
use crate::plan::{Endpoint, Pacing, Plan, Refill, StopAt};
use crate::protocol::Credentials;
use crate::workload::commands::CommandSpecParsed;
use crate::workload::values::DataSize;

/// `***` in place of the password, so configurations can be shared and logged.
fn masked_credentials(c: &Credentials) -> String {
    match &c.user {
        Some(user) => format!("{user}:***"),
        None => "***".to_string(),
    }
}

fn json_str(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

fn json_bool(b: bool) -> String {
    json_str(if b { "true" } else { "false" })
}

fn json_opt(s: Option<&str>) -> String {
    s.map_or_else(|| "null".to_string(), json_str)
}

fn json_path(p: Option<&PathBuf>) -> String {
    p.map_or_else(|| "null".to_string(), |p| json_str(&p.to_string_lossy()))
}

/// memtier's "configuration" object, in its order and spelling (see
/// `reference/memtier-output/default.json`). Values follow memtier's conventions so
/// dashboards read the same thing: options that do nothing here show their "off" value,
/// `key_stddev`/`key_median`/`key_zipf_exp` show what was given (0 = the default
/// applies), `data_size` is 0 when a range or list sizes values, and `requests` is 0
/// with `--test-time`. Secrets are masked. The commands of `--command`, and kvbench's
/// `--shard`, `--start-at`, `--hdr-log` and `--busy-poll`, follow memtier's keys when given.
pub fn shown_options(
    plan: &Plan,
    output: &OutputConfig,
    port: u16,
    cli: &Cli,
    family: Family,
    key_pattern: &str,
    given_key_floats: [Option<f64>; 3],
) -> Vec<(&'static str, String)> {
    let (server, unix_socket) = match &plan.server.endpoint {
        Endpoint::Tcp { host, .. } => (json_str(host), "null".to_string()),
        Endpoint::Unix(path) => ("null".to_string(), json_path(Some(path))),
    };
    let requests = match plan.load.stop {
        StopAt::RequestsPerClient(n) => n,
        // kvbench shares one pass over the keys between all clients: show one client's share.
        StopAt::AllKeys => plan.shard_key_count().div_ceil(plan.total_clients() as u64),
        StopAt::TotalRequests(n) | StopAt::Stream(n) => {
            n.div_ceil(plan.total_clients().max(1) as u64)
        }
        StopAt::Time(_) | StopAt::Idle => 0,
    };
    let test_time = match plan.load.stop {
        StopAt::Time(d) => d.as_secs(),
        _ => 0,
    };
    let (data_size, range, list, pattern) = match &plan.workload.data_size {
        DataSize::Fixed(n) => (*n, (0, 0), String::new(), "R"),
        DataSize::Range {
            min,
            max,
            spread_over_keys,
        } => (
            0,
            (*min, *max),
            String::new(),
            if *spread_over_keys { "S" } else { "R" },
        ),
        DataSize::List(items) => {
            let text: Vec<String> = items.iter().map(|(s, w)| format!("{s}:{w}")).collect();
            (0, (0, 0), text.join(","), "R")
        }
    };
    let f = |x: Option<f64>| format!("{:.6}", x.unwrap_or(0.0));
    let [stddev, median, zipf] = given_key_floats;
    let mut shown = vec![
        ("server", server),
        ("port", port.to_string()),
        (
            "uri",
            json_str(&cli.conn.uri.as_deref().map(masked_uri).unwrap_or_default()),
        ),
        ("unix socket", unix_socket),
        ("address family", json_str(family.memtier_name())),
        ("protocol", json_str(plan.server.protocol.name())),
        ("out_file", json_path(output.out_file.as_ref())),
        ("tls", json_bool(plan.server.tls.is_some())),
        ("cert", json_opt(cli.conn.cert.as_deref())),
        ("key", json_opt(cli.conn.key.as_deref())),
        ("cacert", json_opt(cli.conn.cacert.as_deref())),
        ("tls_skip_verify", json_bool(cli.conn.tls_skip_verify)),
        ("sni", json_opt(cli.conn.sni.as_deref())),
        (
            "client_stats",
            output
                .client_stats
                .as_deref()
                .map_or_else(|| "null".to_string(), json_str),
        ),
        ("run_count", plan.load.run_count.to_string()),
        ("debug", cli.debug.to_string()),
        ("requests", requests.to_string()),
        (
            "rate_limit",
            match plan.load.pacing {
                Pacing::PerConnection(rate) => rate.per_sec,
                _ => 0,
            }
            .to_string(),
        ),
        ("clients", plan.load.clients.to_string()),
        ("threads", plan.load.threads.to_string()),
        ("test_time", test_time.to_string()),
        (
            "ratio",
            json_str(&format!(
                "{}:{}",
                plan.workload.ratio.0, plan.workload.ratio.1
            )),
        ),
        ("pipeline", plan.load.pipeline.to_string()),
        ("data_size", data_size.to_string()),
        ("data_offset", plan.load.shape.data_offset.to_string()),
        ("random_data", json_bool(plan.workload.random_data)),
        (
            "data_size_range",
            json_str(&format!("{}:{}", range.0, range.1)),
        ),
        ("data_size_list", json_str(&list)),
        ("data_size_pattern", json_str(pattern)),
        (
            "expiry_range",
            json_str(&{
                let (a, b) = plan.load.shape.expiry_range.unwrap_or((0, 0));
                format!("{a}:{b}")
            }),
        ),
        (
            "data_import",
            json_path(cli.data_import.as_ref().map(PathBuf::from).as_ref()),
        ),
        ("data_verify", json_bool(cli.data_verify || cli.verify_only)),
        ("verify_only", json_bool(cli.verify_only)),
        ("generate_keys", json_bool(cli.generate_keys)),
        ("key_prefix", json_str(&plan.workload.keys.prefix)),
        // memtier pads these two to 11 columns; kept so the files match byte for byte.
        ("key_minimum", format!("{:11}", plan.workload.keys.min)),
        ("key_maximum", format!("{:11}", plan.workload.keys.max)),
        ("key_pattern", json_str(key_pattern)),
        ("key_stddev", f(stddev)),
        ("key_median", f(median)),
        ("key_zipf_exp", f(zipf)),
        (
            "reconnect_interval",
            plan.load.shape.reconnect_interval.unwrap_or(0).to_string(),
        ),
        (
            "connection_timeout",
            plan.load
                .shape
                .connection_timeout
                .map_or(0, |d| d.as_secs())
                .to_string(),
        ),
        (
            "thread_conn_start_min_jitter_micros",
            plan.load.shape.conn_jitter_us.0.to_string(),
        ),
        (
            "thread_conn_start_max_jitter_micros",
            plan.load.shape.conn_jitter_us.1.to_string(),
        ),
        ("multi_key_get", plan.load.shape.multi_key_get.to_string()),
        (
            "authenticate",
            json_str(
                &plan
                    .server
                    .credentials
                    .as_ref()
                    .map(masked_credentials)
                    .unwrap_or_default(),
            ),
        ),
        ("select-db", plan.server.select_db.unwrap_or(0).to_string()),
        ("no-expiry", json_bool(cli.no_expiry)),
        (
            "wait-ratio",
            json_str(
                &plan
                    .load
                    .shape
                    .wait
                    .map_or_else(|| "0:0".to_string(), |w| format!("{}:{}", w.sets, w.waits)),
            ),
        ),
        (
            "num-slaves",
            json_str(&plan.load.shape.wait.map_or_else(
                || "0:0".to_string(),
                |w| format!("{}:{}", w.num_slaves.0, w.num_slaves.1),
            )),
        ),
        (
            "wait-timeout",
            json_str(&plan.load.shape.wait.map_or_else(
                || "0-0".to_string(),
                |w| format!("{}-{}", w.timeout_ms.0, w.timeout_ms.1),
            )),
        ),
        ("print-all-runs", json_bool(output.print_all_runs)),
    ];
    shown.extend(ramp_options(plan));
    shown.extend(command_options(plan));
    shown.extend(open_loop_options(plan));
    shown.extend(distributed_options(cli, plan, output));
    shown
}

/// kvbench's `--shard`, `--start-at`, `--hdr-log`, `--busy-poll` and `--refill`,
/// last and only when given, so files of runs without them match memtier's key for key.
fn distributed_options(
    cli: &Cli,
    plan: &Plan,
    output: &OutputConfig,
) -> Vec<(&'static str, String)> {
    let mut shown = Vec::new();
    if cli.shard.is_some() {
        let shard = plan.load.shard;
        shown.push((
            "shard",
            json_str(&format!("{}/{}", shard.index, shard.count)),
        ));
    }
    if let Some(at) = plan.load.start_at {
        shown.push(("start_at", epoch_seconds_text(at)));
    }
    if let Some(path) = &output.hdr_log {
        shown.push(("hdr_log", json_path(Some(path))));
    }
    if let Some(spin) = plan.load.busy_poll {
        shown.push(("busy_poll", spin.as_micros().to_string()));
    }
    if cli.refill.is_some() {
        let refill = match plan.load.shape.refill {
            Refill::AsRepliesArrive => "reply",
            Refill::WholeBatch => "batch",
        };
        shown.push(("refill", json_str(refill)));
    }
    shown
}

/// The staircase ramp-up, after memtier's other options and only with one, as memtier
/// writes them: `clients_start`, `clients_step` (clients per thread) and `step_duration`
/// (seconds), as bare numbers.
fn ramp_options(plan: &Plan) -> Vec<(&'static str, String)> {
    match plan.load.shape.ramp {
        Some(ramp) => vec![
            ("clients_start", ramp.start.to_string()),
            ("clients_step", ramp.step.to_string()),
            ("step_duration", ramp.step_duration.as_secs().to_string()),
        ],
        None => Vec::new(),
    }
}

/// With `--command`, the commands (memtier's configuration has none, so its file cannot
/// say what its `Hsets` or `Gets` rows sent): `command`, `command-ratio` and
/// `command-key-pattern`, named as the flags and as a `--config` file lists them (one array
/// each, in the order given, every command's ratio and key pattern filled in), so these
/// three keys copied into a `--config` file run the same commands again:
///
/// ```text
/// ,"command": ["hset __key__ f __data__", "get __key__"]
/// ,"command-ratio": [2, 1]
/// ,"command-key-pattern": ["R", "R"]
/// ```
fn command_options(plan: &Plan) -> Vec<(&'static str, String)> {
    let Some(arbitrary) = &plan.workload.arbitrary else {
        return Vec::new();
    };
    let commands = &arbitrary.list.commands;
    let list = |item: &dyn Fn(&CommandSpecParsed) -> String| {
        let items: Vec<String> = commands.iter().map(item).collect();
        format!("[{}]", items.join(", "))
    };
    vec![
        ("command", list(&|c| json_str(&c.line))),
        ("command-ratio", list(&|c| c.ratio.to_string())),
        (
            "command-key-pattern",
            list(&|c| json_str(&c.key_pattern.letter().to_string())),
        ),
    ]
}

/// kvbench's open-loop options, after memtier's (only when open loop or a warm-up is
/// used, so closed-loop files stay memtier's byte for byte): `rate` (in all), `arrival`,
/// `warmup` (seconds left out of every result), `rate_sweep`, `step_duration`, `slo`.
fn open_loop_options(plan: &Plan) -> Vec<(&'static str, String)> {
    let mut shown = Vec::new();
    let load = &plan.load;
    if let Some(sweep) = load.sweep {
        shown.push((
            "rate_sweep",
            json_str(&format!("{}:{}:{}", sweep.start, sweep.end, sweep.step)),
        ));
        shown.push(("step_duration", sweep.step_duration.as_secs().to_string()));
        let slo = sweep
            .slo
            .map_or_else(String::new, |s| format!("p{}:{}", s.percentile, s.max_ms));
        shown.push(("slo", json_str(&slo)));
    } else if let Pacing::Total(rate) = load.pacing {
        shown.push(("rate", rate.per_sec.to_string()));
    }
    if let Some(rate) = load.pacing.rate() {
        shown.push(("arrival", json_str(rate.arrival.name())));
    }
    if load.pacing.is_open() || !load.warmup.is_zero() {
        shown.push(("warmup", load.warmup.as_secs().to_string()));
    }
    shown
}

/// Options memtier's `config_print` writes as `yes`/`no` (the JSON's `"true"`/`"false"`).
const YES_NO: [&str; 8] = [
    "tls",
    "tls_skip_verify",
    "random_data",
    "data_verify",
    "verify_only",
    "generate_keys",
    "no-expiry",
    "print-all-runs",
];

/// Ranges `config_print` writes as `MIN-MAX` where the JSON has `MIN:MAX`.
const DASHED_RANGES: [&str; 3] = ["data_size_range", "expiry_range", "num-slaves"];

/// The `--show-config` text, as memtier's `config_print` writes it (memtier 2.2, the
/// version whose JSON `shown` copies): one `name = value` line per option of
/// `Settings::shown`, strings without their JSON quotes and escapes, in the text's own
/// spellings where they are not the JSON's: `yes`/`no` for switches, `MIN-MAX` ranges,
/// `(null)` for an unset path or name (glibc's `%s` of a null pointer), `out_file` after
/// the TLS lines, no `key_zipf_exp` line, and `json-out-file` (`json_out_file`) before
/// `print-all-runs`. kvbench's own options follow, as in the JSON.
pub fn render_show_config(shown: &[(&str, String)], json_out_file: Option<&Path>) -> String {
    let value_of = |name: &str| shown.iter().find(|(n, _)| *n == name).map(|(_, v)| v);
    let mut out = String::new();
    let mut line = |name: &str, value: &str| {
        out.push_str(name);
        out.push_str(" = ");
        out.push_str(&text_value(name, value));
        out.push('\n');
    };
    for (name, value) in shown {
        match *name {
            // memtier's text has no line for it (its JSON has).
            "key_zipf_exp" => {}
            // After the TLS lines (below); where the JSON has it when they are missing.
            "out_file" if value_of("sni").is_some() => {}
            "sni" => {
                line(name, value);
                if let Some(out_file) = value_of("out_file") {
                    line("out_file", out_file);
                }
            }
            "print-all-runs" => {
                let json = json_out_file
                    .map_or_else(|| "null".to_string(), |p| json_str(&p.to_string_lossy()));
                line("json-out-file", &json);
                line(name, value);
            }
            _ => line(name, value),
        }
    }
    out
}

/// One value of the JSON list as `config_print` prints it.
fn text_value(name: &str, value: &str) -> String {
    if value == "null" {
        return "(null)".to_string();
    }
    let text = if value.starts_with('"') {
        serde_json::from_str::<String>(value).unwrap_or_else(|_| value.to_string())
    } else {
        value.trim().to_string()
    };
    if YES_NO.contains(&name) {
        match text.as_str() {
            "true" => return "yes".to_string(),
            "false" => return "no".to_string(),
            _ => {}
        }
    }
    if DASHED_RANGES.contains(&name) {
        return text.replacen(':', "-", 1);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_take_the_texts_spellings() {
        assert_eq!(text_value("unix socket", "null"), "(null)");
        assert_eq!(text_value("tls", "\"false\""), "no");
        assert_eq!(text_value("print-all-runs", "\"true\""), "yes");
        // Only switches: a key prefix that reads "true" stays as given.
        assert_eq!(text_value("key_prefix", "\"true\""), "true");
        assert_eq!(text_value("data_size_range", "\"32:64\""), "32-64");
        assert_eq!(text_value("num-slaves", "\"0:0\""), "0-0");
        assert_eq!(text_value("wait-ratio", "\"1:2\""), "1:2");
        assert_eq!(text_value("key_minimum", "          0"), "0");
        assert_eq!(text_value("key_prefix", "\"k\\\"p\""), "k\"p");
    }

    #[test]
    fn out_file_follows_the_tls_lines_and_json_out_file_comes_last() {
        let shown: Vec<(&str, String)> = [
            ("server", "\"localhost\""),
            ("out_file", "\"run.txt\""),
            ("tls", "\"false\""),
            ("sni", "null"),
            ("client_stats", "null"),
            ("key_median", "0.000000"),
            ("key_zipf_exp", "0.000000"),
            ("reconnect_interval", "0"),
            ("print-all-runs", "\"false\""),
            ("shard", "\"0/2\""),
        ]
        .into_iter()
        .map(|(k, v)| (k, v.to_string()))
        .collect();
        assert_eq!(
            render_show_config(&shown, Some(Path::new("run.json"))),
            "server = localhost\ntls = no\nsni = (null)\nout_file = run.txt\n\
             client_stats = (null)\nkey_median = 0.000000\nreconnect_interval = 0\n\
             json-out-file = run.json\nprint-all-runs = no\nshard = 0/2\n"
        );
        assert!(render_show_config(&shown, None).contains("\njson-out-file = (null)\n"));
    }
}
