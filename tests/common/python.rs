//! python3 with hdrh (the HdrHistogram port on PyPI as `hdrhistogram`), an independent
//! reader of kvbench's histograms: scripts print JSON, which the tests compare with what
//! kvbench wrote. Without hdrh the checks are skipped with a printed reason.

use std::path::Path;
use std::process::Command;

/// Per row of JSON result files' `ALL STATS` blocks: the union of their whole-run
/// compressed histograms, `{"Sets": [count, p50_us, p99_us, p99.9_us], ...}`.
pub const PY_UNION: &str = r#"
import json, sys
from hdrh.histogram import HdrHistogram
sums = {}
for path in sys.argv[1:]:
    block = json.load(open(path))["ALL STATS"]
    for row, v in block.items():
        if not isinstance(v, dict) or "Count" not in v or v["Count"] == 0:
            continue
        enc = v["Percentile Latencies"]["Histogram log format"]["Compressed Histogram"]
        sums.setdefault(row, HdrHistogram(1, 3600000000, 3)).add(HdrHistogram.decode(enc))
print(json.dumps({r: [h.get_total_count()] + [h.get_value_at_percentile(p) for p in (50, 99, 99.9)] for r, h in sums.items()}))
"#;

/// Per file: `[count, p50_us, p99_us, p99.9_us]` of the sum of all its interval lines,
/// the way hdrh's documentation reads a log (`add_next_interval_histogram` into one
/// total). That reader adds tagged lines too, so a file that holds one histogram's
/// intervals plus tagged ones reads back with too large a count.
pub const PY_LOG_SUMS: &str = r#"
import json, sys
from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader
out = {}
for path in sys.argv[1:]:
    total = HdrHistogram(1, 3600000000, 3)
    reader = HistogramLogReader(path, HdrHistogram(1, 3600000000, 3))
    while reader.add_next_interval_histogram(total):
        pass
    out[path] = [total.get_total_count()] + [total.get_value_at_percentile(p) for p in (50, 99, 99.9)]
print(json.dumps(out))
"#;

/// Whether python3 can import hdrh; says why the checks are skipped when it cannot.
pub fn python_hdrh() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import hdrh.log"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!(
            "skipping the python hdrh checks: python3 with hdrh is not installed (pip install hdrhistogram)"
        );
    }
    ok
}

/// Runs `script` with `args` and parses what it printed as JSON.
pub fn python(script: &str, args: &[&Path]) -> serde_json::Value {
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "python3 failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("python printed JSON")
}

/// `[count, p50, p99, p99.9]` of a printed python row, as numbers.
pub fn figures(v: &serde_json::Value, key: &str) -> Vec<u64> {
    v[key]
        .as_array()
        .unwrap_or_else(|| panic!("python printed no {key:?}: {v}"))
        .iter()
        .map(|x| x.as_u64().expect("a number"))
        .collect()
}
