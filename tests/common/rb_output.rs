//! A parser for redis-benchmark's text output (the normal per-test blocks, `-q` lines,
//! `--csv` rows), strict about layout, so that the real redis-benchmark's output and
//! kvbench's can be read by the same code and compared field by field.
//!
//! Include it from a test file with `#[path = "common/rb_output.rs"] mod rb_output;`.
//!
//! The live progress line (`SET: rps=... \r`) and the blanks that erase it are dropped
//! first: of each line, only what follows its last `\r` is kept ([`visible_lines`]).

#![allow(dead_code)]

/// One `N% <= V milliseconds (cumulative count C)` line.
#[derive(Clone, Debug, PartialEq)]
pub struct DistLine {
    /// The percentage as printed (three decimals).
    pub percent: String,
    /// The latency as printed (three decimals), milliseconds.
    pub value_ms: String,
    /// The cumulative count.
    pub cumulative: u64,
}

/// What a block says about the server(s).
#[derive(Clone, Debug, PartialEq)]
pub enum BlockServer {
    /// No configuration lines (redis-benchmark could not read it).
    None,
    /// `host configuration "save": ...` and `"appendonly": ...`.
    Single { save: String, appendonly: String },
    /// `cluster mode: yes (N masters)` and the `node [i] configuration:` groups.
    Cluster {
        masters: u32,
        nodes: Vec<(u32, String, String)>,
    },
}

/// One normal-mode test block.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub title: String,
    pub requests: u64,
    pub seconds: f64,
    pub clients: u32,
    pub payload_bytes: u64,
    pub keep_alive: u32,
    pub server: BlockServer,
    pub multi_thread: bool,
    pub threads: Option<u32>,
    pub percentiles: Vec<DistLine>,
    pub cumulative: Vec<DistLine>,
    pub rps: f64,
    /// avg, min, p50, p95, p99, max (milliseconds).
    pub summary: [f64; 6],
}

/// A normal-mode output: an optional cluster banner, the blocks, and whether an empty
/// line closed the default suite.
#[derive(Clone, Debug, PartialEq)]
pub struct NormalOutput {
    /// `(node name, host:port)` of each `Master i:` line.
    pub masters: Option<Vec<(Option<String>, String)>>,
    /// Lines starting with `WARNING:`.
    pub warnings: Vec<String>,
    pub blocks: Vec<Block>,
    pub trailing_empty_line: bool,
}

/// One `-q` line.
#[derive(Clone, Debug, PartialEq)]
pub struct QuietLine {
    pub title: String,
    pub rps: f64,
    pub p50_ms: f64,
}

/// One `--csv` row.
#[derive(Clone, Debug, PartialEq)]
pub struct CsvRow {
    pub title: String,
    pub rps: f64,
    /// avg, min, p50, p95, p99, max (milliseconds).
    pub latencies: [f64; 6],
}

/// The header redis-benchmark's `--csv` starts with.
pub const CSV_HEADER: &str = "\"test\",\"rps\",\"avg_latency_ms\",\"min_latency_ms\",\"p50_latency_ms\",\"p95_latency_ms\",\"p99_latency_ms\",\"max_latency_ms\"";

/// The lines a terminal would show: for each `\n`-separated line, the text after its last
/// `\r` (the live line and its eraser are overwritten there). A final line without `\n`
/// is kept only if something visible remains in it.
pub fn visible_lines(raw: &str) -> Vec<String> {
    let mut lines: Vec<String> = raw
        .split('\n')
        .map(|l| l.rsplit('\r').next().unwrap_or("").to_string())
        .collect();
    if raw.ends_with('\n') || lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    lines
}

fn number<T: std::str::FromStr>(s: &str, what: &str, line: &str) -> Result<T, String> {
    s.trim()
        .parse()
        .map_err(|_| format!("{what}: '{s}' is not a number in line {line:?}"))
}

fn strip<'a>(line: &'a str, prefix: &str, suffix: &str) -> Option<&'a str> {
    line.strip_prefix(prefix)?.strip_suffix(suffix)
}

/// A requests-per-second figure: `%.2f`, or `inf`, which redis-benchmark prints when a
/// test finished within its millisecond clock's tick (it divides by whole milliseconds).
fn rps_figure(s: &str) -> bool {
    s == "inf" || two_decimals(s)
}

fn two_decimals(s: &str) -> bool {
    s.split_once('.')
        .is_some_and(|(int, frac)| !int.is_empty() && frac.len() == 2)
}

fn three_decimals(s: &str) -> bool {
    let Some((int, frac)) = s.split_once('.') else {
        return false;
    };
    !int.is_empty()
        && int.bytes().all(|b| b.is_ascii_digit())
        && frac.len() == 3
        && frac.bytes().all(|b| b.is_ascii_digit())
}

fn dist_line(line: &str) -> Result<DistLine, String> {
    let (percent, rest) = line
        .split_once("% <= ")
        .ok_or_else(|| format!("not a distribution line: {line:?}"))?;
    let (value, rest) = rest
        .split_once(" milliseconds (cumulative count ")
        .ok_or_else(|| format!("not a distribution line: {line:?}"))?;
    let count = rest
        .strip_suffix(')')
        .ok_or_else(|| format!("not a distribution line: {line:?}"))?;
    if !three_decimals(percent) || !three_decimals(value) {
        return Err(format!(
            "distribution figures need three decimals: {line:?}"
        ));
    }
    Ok(DistLine {
        percent: percent.to_string(),
        value_ms: value.to_string(),
        cumulative: number(count, "cumulative count", line)?,
    })
}

/// Check a distribution section: counts never fall, values and percents never fall, the
/// last line reaches the total at 100%.
fn check_distribution(lines: &[DistLine], total: u64, what: &str) -> Result<(), String> {
    let last = lines.last().ok_or_else(|| format!("{what}: no lines"))?;
    if last.cumulative != total || last.percent != "100.000" {
        return Err(format!(
            "{what}: last line {last:?} does not reach {total} at 100%"
        ));
    }
    for pair in lines.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        let (va, vb): (f64, f64) = (
            a.value_ms.parse().unwrap_or(0.0),
            b.value_ms.parse().unwrap_or(0.0),
        );
        let (pa, pb): (f64, f64) = (
            a.percent.parse().unwrap_or(0.0),
            b.percent.parse().unwrap_or(0.0),
        );
        if b.cumulative < a.cumulative || vb < va || pb < pa {
            return Err(format!("{what}: out of order: {a:?} then {b:?}"));
        }
        if b.cumulative == a.cumulative && b.cumulative != total {
            return Err(format!("{what}: a repeated count below the total: {b:?}"));
        }
    }
    Ok(())
}

struct Cursor<'a> {
    lines: &'a [String],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn peek(&self) -> Option<&'a str> {
        self.lines.get(self.at).map(String::as_str)
    }

    fn next(&mut self, what: &str) -> Result<&'a str, String> {
        let line = self
            .peek()
            .ok_or_else(|| format!("output ends where {what} was expected"))?;
        self.at += 1;
        Ok(line)
    }

    fn expect(&mut self, exact: &str) -> Result<(), String> {
        let line = self.next(exact)?;
        if line != exact {
            return Err(format!(
                "expected {exact:?}, found {line:?} (line {})",
                self.at
            ));
        }
        Ok(())
    }

    fn field<T: std::str::FromStr>(&mut self, prefix: &str, suffix: &str) -> Result<T, String> {
        let line = self.next(prefix)?;
        let value = strip(line, prefix, suffix)
            .ok_or_else(|| format!("expected {prefix:?}...{suffix:?}, found {line:?}"))?;
        number(value, prefix.trim(), line)
    }
}

fn parse_block(c: &mut Cursor) -> Result<Block, String> {
    let header = c.next("a block")?;
    let title = strip(header, "====== ", " ======")
        .ok_or_else(|| format!("expected a block title, found {header:?}"))?
        .to_string();
    let line = c.next("requests completed")?;
    let (requests, seconds) = strip(line, "  ", " seconds")
        .and_then(|s| s.split_once(" requests completed in "))
        .ok_or_else(|| format!("expected 'requests completed in', found {line:?}"))?;
    let requests = number(requests, "requests", line)?;
    if !two_decimals(seconds) {
        return Err(format!("seconds need two decimals: {line:?}"));
    }
    let seconds = number(seconds, "seconds", line)?;
    let clients = c.field("  ", " parallel clients")?;
    let payload_bytes = c.field("  ", " bytes payload")?;
    let keep_alive = c.field("  keep alive: ", "")?;
    let server = match c.peek() {
        Some(l) if l.starts_with("  host configuration \"save\": ") => {
            let save = c.next("save")?["  host configuration \"save\": ".len()..].to_string();
            let l = c.next("appendonly")?;
            let appendonly = l
                .strip_prefix("  host configuration \"appendonly\": ")
                .ok_or_else(|| format!("expected host configuration appendonly, found {l:?}"))?
                .to_string();
            BlockServer::Single { save, appendonly }
        }
        Some(l) if l.starts_with("  cluster mode: yes (") => {
            let masters = c.field("  cluster mode: yes (", " masters)")?;
            let mut nodes = Vec::new();
            while let Some(l) = c.peek() {
                let Some(i) = strip(l, "  node [", "] configuration:") else {
                    break;
                };
                let i = number(i, "node", l)?;
                c.next("node")?;
                let save = c.next("save")?;
                let save = save
                    .strip_prefix("    save: ")
                    .ok_or_else(|| format!("expected save, found {save:?}"))?;
                let ao = c.next("appendonly")?;
                let ao = ao
                    .strip_prefix("    appendonly: ")
                    .ok_or_else(|| format!("expected appendonly, found {ao:?}"))?;
                nodes.push((i, save.to_string(), ao.to_string()));
            }
            BlockServer::Cluster { masters, nodes }
        }
        _ => BlockServer::None,
    };
    let mt = c.next("multi-thread")?;
    let multi_thread = match mt {
        "  multi-thread: yes" => true,
        "  multi-thread: no" => false,
        _ => return Err(format!("expected multi-thread, found {mt:?}")),
    };
    let threads = if multi_thread {
        Some(c.field("  threads: ", "")?)
    } else {
        None
    };
    c.expect("")?;
    c.expect("Latency by percentile distribution:")?;
    let mut percentiles = Vec::new();
    while let Some(l) = c.peek().filter(|l| !l.is_empty()) {
        percentiles.push(dist_line(l)?);
        c.at += 1;
    }
    c.expect("")?;
    c.expect("Cumulative distribution of latencies:")?;
    let mut cumulative = Vec::new();
    while let Some(l) = c.peek().filter(|l| !l.is_empty()) {
        cumulative.push(dist_line(l)?);
        c.at += 1;
    }
    c.expect("")?;
    c.expect("Summary:")?;
    let rps = c.field("  throughput summary: ", " requests per second")?;
    c.expect("  latency summary (msec):")?;
    c.expect("          avg       min       p50       p95       p99       max")?;
    let line = c.next("latency summary figures")?;
    let fields: Vec<&str> = line.split_whitespace().collect();
    let widths_ok = line.len() == 4 + 6 * 9 + 5 && line.starts_with("    ");
    if fields.len() != 6 || !widths_ok || !fields.iter().all(|f| three_decimals(f)) {
        return Err(format!("expected six %9.3f figures, found {line:?}"));
    }
    let mut summary = [0.0; 6];
    for (slot, f) in summary.iter_mut().zip(&fields) {
        *slot = number(f, "latency summary", line)?;
    }
    // The histogram's total: redis-benchmark may complete a few more requests than it
    // records (the rest of the last pipeline), so it is not `requests`.
    let total = percentiles.last().map_or(0, |l| l.cumulative);
    if total > requests {
        return Err(format!(
            "{title}: {total} latencies for {requests} requests"
        ));
    }
    check_distribution(&percentiles, total, "percentile distribution")?;
    check_distribution(&cumulative, total, "cumulative distribution")?;
    Ok(Block {
        title,
        requests,
        seconds,
        clients,
        payload_bytes,
        keep_alive,
        server,
        multi_thread,
        threads,
        percentiles,
        cumulative,
        rps,
        summary,
    })
}

/// Parse normal-mode output (stdout of a run without `-q` / `--csv`).
pub fn parse_normal(raw: &str) -> Result<NormalOutput, String> {
    let lines = visible_lines(raw);
    let mut c = Cursor {
        lines: &lines,
        at: 0,
    };
    let mut warnings = Vec::new();
    let mut masters = None;
    while let Some(l) = c.peek() {
        if l.starts_with("WARNING:") {
            warnings.push(l.to_string());
            c.at += 1;
        } else if let Some(n) = strip(l, "Cluster has ", " master nodes:") {
            let n: usize = number(n, "masters", l)?;
            c.at += 1;
            c.expect("")?;
            let mut list = Vec::new();
            for i in 0..n {
                let l = c.next("a master")?;
                let rest = l
                    .strip_prefix(&format!("Master {i}: "))
                    .ok_or_else(|| format!("expected 'Master {i}: ', found {l:?}"))?;
                list.push(match rest.split_once(' ') {
                    Some((name, addr)) => (Some(name.to_string()), addr.to_string()),
                    None => (None, rest.to_string()),
                });
            }
            c.expect("")?;
            masters = Some(list);
        } else {
            break;
        }
    }
    let mut blocks = Vec::new();
    while c.peek().is_some_and(|l| l.starts_with("====== ")) {
        blocks.push(parse_block(&mut c)?);
    }
    let trailing_empty_line = c.peek() == Some("");
    if trailing_empty_line {
        c.at += 1;
    }
    if let Some(l) = c.peek() {
        return Err(format!("unexpected line {l:?} (line {})", c.at + 1));
    }
    Ok(NormalOutput {
        masters,
        warnings,
        blocks,
        trailing_empty_line,
    })
}

/// Parse `-q` output: `TITLE: N requests per second, p50=V msec` lines, then an optional
/// empty line.
pub fn parse_quiet(raw: &str) -> Result<Vec<QuietLine>, String> {
    let mut out = Vec::new();
    let lines = visible_lines(raw);
    for (i, line) in lines.iter().enumerate() {
        if line.is_empty() && i + 1 == lines.len() {
            break;
        }
        if line.starts_with("WARNING:") {
            continue;
        }
        let (head, p50) = line
            .rsplit_once(" requests per second, p50=")
            .ok_or_else(|| format!("not a -q line: {line:?}"))?;
        let p50 = p50
            .strip_suffix(" msec")
            .ok_or_else(|| format!("not a -q line: {line:?}"))?;
        let (title, rps) = head
            .rsplit_once(": ")
            .ok_or_else(|| format!("not a -q line: {line:?}"))?;
        if !three_decimals(p50) || !rps_figure(rps) {
            return Err(format!("-q figures need %.2f and %.3f: {line:?}"));
        }
        out.push(QuietLine {
            title: title.to_string(),
            rps: number(rps, "rps", line)?,
            p50_ms: number(p50, "p50", line)?,
        });
    }
    Ok(out)
}

/// Parse `--csv` output: the header, then rows of eight quoted fields. The title is read
/// as everything before the seven figures, so redis-benchmark's unescaped quotes in a
/// title (`"eval return redis.call("ping") 0"`) and kvbench's doubled ones both parse;
/// doubled quotes are undone.
pub fn parse_csv(raw: &str) -> Result<Vec<CsvRow>, String> {
    let lines = visible_lines(raw);
    let mut rows = Vec::new();
    let mut lines = lines.iter().filter(|l| !l.starts_with("WARNING:"));
    match lines.next() {
        Some(h) if h == CSV_HEADER => {}
        other => return Err(format!("expected the CSV header, found {other:?}")),
    }
    for line in lines {
        let body = line
            .strip_prefix('"')
            .and_then(|l| l.strip_suffix('"'))
            .ok_or_else(|| format!("a CSV row is quoted fields: {line:?}"))?;
        let fields: Vec<&str> = body.rsplitn(8, "\",\"").collect();
        if fields.len() != 8 {
            return Err(format!("a CSV row has 8 fields: {line:?}"));
        }
        let rps = fields[6];
        if !rps_figure(rps) {
            return Err(format!("rps needs two decimals: {line:?}"));
        }
        let mut latencies = [0.0; 6];
        for (i, slot) in latencies.iter_mut().enumerate() {
            let f = fields[5 - i];
            if !three_decimals(f) {
                return Err(format!("latencies need three decimals: {line:?}"));
            }
            *slot = number(f, "latency", line)?;
        }
        rows.push(CsvRow {
            title: fields[7].replace("\"\"", "\""),
            rps: number(rps, "rps", line)?,
            latencies,
        });
    }
    Ok(rows)
}

/// A block's layout with the figures left out: the header lines' labels, the server
/// section's shape and which sections exist, to compare two tools' blocks line for line.
pub fn block_shape(b: &Block) -> Vec<String> {
    let mut shape = vec![
        format!("title {}", b.title),
        "requests completed".to_string(),
        "parallel clients".to_string(),
        "bytes payload".to_string(),
        "keep alive".to_string(),
    ];
    match &b.server {
        BlockServer::None => {}
        BlockServer::Single { .. } => shape.push("host configuration save, appendonly".to_string()),
        BlockServer::Cluster { masters, nodes } => {
            shape.push(format!("cluster mode: {masters} masters"));
            shape.extend(
                nodes
                    .iter()
                    .map(|(i, _, _)| format!("node [{i}] save, appendonly")),
            );
        }
    }
    shape.push(format!("multi-thread {}", b.multi_thread));
    if b.threads.is_some() {
        shape.push("threads".to_string());
    }
    shape.push(format!("percentile lines: {}", !b.percentiles.is_empty()));
    shape.push(format!("cumulative lines: {}", !b.cumulative.is_empty()));
    shape.push("summary: 6 figures".to_string());
    shape
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_line_residue_is_dropped() {
        let raw = " \rSET: rps=0.0 (overall: inf) avg_msec=0.079 (overall: 0.079)\r      \rSET: 1.00 requests per second, p50=0.031 msec\n \rGET: 2.00 requests per second, p50=0.031 msec\n\n";
        assert_eq!(
            visible_lines(raw),
            [
                "SET: 1.00 requests per second, p50=0.031 msec",
                "GET: 2.00 requests per second, p50=0.031 msec",
                ""
            ]
        );
        let q = parse_quiet(raw).unwrap();
        assert_eq!(q.len(), 2);
        assert_eq!(q[1].title, "GET");
    }

    #[test]
    fn a_test_within_one_millisecond_tick_reads_inf() {
        let csv = format!(
            "{CSV_HEADER}\n\"PING_INLINE\",\"inf\",\"0.219\",\"0.104\",\"0.215\",\"0.327\",\"0.351\",\"0.359\"\n"
        );
        let rows = parse_csv(&csv).unwrap();
        assert!(rows[0].rps.is_infinite());
        let q = parse_quiet("PING_INLINE: inf requests per second, p50=0.031 msec\n\n").unwrap();
        assert!(q[0].rps.is_infinite());
        assert!(parse_csv(&csv.replace("\"inf\"", "\"12.5\"")).is_err());
    }
}
