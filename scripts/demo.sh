#!/usr/bin/env bash
# `make demo`: from a fresh Debian machine to a kvbench result in one command.
#
# Installs what is missing, builds kvbench, starts a throwaway redis-server on a free
# port of 127.0.0.1 and shows each tool kvbench replaces, on that server:
#   1. memtier_benchmark's command line: a 10-second 3:2 SET:GET load, the ALL STATS table
#      and a one-line summary from the JSON; then memcached over both memcache protocols;
#   2. open loop: a fixed total rate, response time beside service time;
#   3. `kvbench redis-benchmark -t set,get -q -P 8` beside the real redis-benchmark;
#   4. `kvbench report`: two result files (pipeline 1 and 8) as one HTML page;
#   5. three shards started together as a Kubernetes Indexed Job runs them
#      (deploy/local-job.sh), merged exactly by `kvbench merge` into one table;
#   6. redis-cli's latency probe (`kvbench latency`), beside `redis-cli --latency`;
#   7. redis-zbench-go's sorted-set load and query (`kvbench zbench`).
# Every server is stopped at the end (also on Ctrl-C).
#
# Environment knobs (all optional):
#   KVBENCH_DEMO_DIR   where demo.json goes (default: demo-out/ in the repo)
#   KVBENCH_DEMO_TIME  --test-time in seconds of the first run (default: 10; the
#                      later sections take a few seconds each)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

OUT_DIR=${KVBENCH_DEMO_DIR:-$ROOT/demo-out}
TEST_TIME=${KVBENCH_DEMO_TIME:-10}
JSON=$OUT_DIR/demo.json
KVBENCH=$ROOT/target/release/kvbench

phase=setup
interrupted=0
redis_pid=
redis_dir=

memcached_pid=
cleanup() {
    if [[ -n $memcached_pid ]]; then
        kill "$memcached_pid" 2>/dev/null || true
        wait "$memcached_pid" 2>/dev/null || true
        echo "demo: stopped memcached (pid $memcached_pid)"
    fi
    if [[ -n $redis_pid ]]; then
        kill "$redis_pid" 2>/dev/null || true
        wait "$redis_pid" 2>/dev/null || true
        echo "demo: stopped redis-server (pid $redis_pid)"
    fi
    if [[ -n $redis_dir ]]; then
        rm -rf "$redis_dir"
    fi
}
on_interrupt() {
    # While kvbench runs, Ctrl-C is its to handle: it stops, still writes its results and
    # exits 130, and the demo shows them. At any other point, stop the demo right away.
    if [[ $phase == bench ]]; then
        interrupted=1
    else
        echo >&2
        echo "demo: interrupted" >&2
        exit 130
    fi
}
trap cleanup EXIT
trap on_interrupt INT
trap 'exit 143' TERM

SCRIPT_NAME=demo
# shellcheck source=scripts/lib.sh
. "$ROOT/scripts/lib.sh"

echo "==> checking dependencies"
bash scripts/ensure-deps.sh
if ! command -v cargo >/dev/null 2>&1 && [[ -r "$HOME/.cargo/env" ]]; then
    # shellcheck disable=SC1091
    . "$HOME/.cargo/env"
fi

echo "==> building kvbench (release)"
if ! cargo build --release; then
    echo "demo: error: cargo build --release failed; see the compiler output above" >&2
    exit 1
fi

echo "==> starting a throwaway redis-server"
start_redis
echo "demo: redis-server $(redis-server --version | awk '{print $3}' | sed 's/^v=//') on 127.0.0.1:$REDIS_PORT (pid $redis_pid, data dir $redis_dir)"

mkdir -p "$OUT_DIR"
rm -f "$JSON"
args=(-s 127.0.0.1 -p "$REDIS_PORT" --ratio=3:2 "--test-time=$TEST_TIME" -t 2 -c 25
    --key-maximum=100000 --hide-histogram "--json-out-file=$JSON")
echo "==> running: target/release/kvbench ${args[*]}"
echo "    (${TEST_TIME} s; the live progress line is on stderr; Ctrl-C stops early and still reports)"
echo

phase=bench
set +e
"$KVBENCH" "${args[@]}"
status=$?
set -e
phase=report

if ((status != 0 && status != 130)); then
    echo "demo: error: kvbench exited with status $status" >&2
    exit "$status"
fi

echo
if [[ ! -s $JSON ]]; then
    echo "demo: error: kvbench did not write $JSON" >&2
    exit 1
fi
echo "JSON results: $JSON"
python3 - "$JSON" <<'PY'
import json
import sys

path = sys.argv[1]
try:
    with open(path) as f:
        doc = json.load(f)
except ValueError as e:
    sys.exit(f"demo: error: {path} is not valid JSON: {e}")

# One run writes "ALL STATS"; -x N writes BEST/WORST/AGGREGATED: prefer the aggregate.
results_key = next(
    (k for k in doc if k.startswith("AGGREGATED")),
    "ALL STATS" if "ALL STATS" in doc else None,
)
if results_key is None or "Totals" not in doc[results_key]:
    sys.exit(f"demo: error: no Totals row in {path}")
res = doc[results_key]
tot = res["Totals"]
p99 = tot.get("Percentile Latencies", {}).get("p99.00")
avg = tot.get("Average Latency")
interrupted = res.get("Runtime", {}).get("Interrupted") == "true"


def num(x, fmt):
    return format(x, fmt) if isinstance(x, (int, float)) else "n/a"


parts = [
    f"{num(tot.get('Ops/sec'), ',.0f')} ops/sec",
    f"p99 {num(p99, '.3f')} ms",
    f"avg {num(avg, '.3f')} ms",
    f"{num(tot.get('Count'), ',')} requests",
]
for row in ("Sets", "Gets"):
    if row in res:
        parts.append(f"{row.lower()} {num(res[row].get('Ops/sec'), ',.0f')}/s")
if "Gets" in res:
    parts.append(f"hits {num(res['Gets'].get('Hits/sec'), ',.0f')}/s")
print("Summary: " + ", ".join(parts) + (" (interrupted)" if interrupted else ""))
PY

if ((interrupted || status == 130)); then
    exit 130
fi

# Runs one command as a demo step: Ctrl-C is the command's (kvbench stops and reports,
# and the demo ends with 130); any other failure ends the demo, naming the step.
run_guarded() {
    local what=$1 status
    shift
    phase=bench
    set +e
    "$@"
    status=$?
    set -e
    phase=report
    if ((status == 130)); then
        exit 130
    fi
    if ((status != 0)); then
        echo "demo: error: $what exited with status $status" >&2
        exit "$status"
    fi
    echo
}

# One kvbench command line as a demo step, shown before it runs.
run_step() {
    local what=$1
    shift
    echo "==> $what"
    echo "    running: kvbench ${*}"
    echo
    run_guarded "kvbench ($what)" "$KVBENCH" "$@"
}

# The same tool against memcached: both protocols, pipelined, a few seconds each.
MC_TIME=$(((TEST_TIME + 1) / 2))
echo
echo "==> starting a throwaway memcached"
start_memcached 2
echo "demo: memcached $(memcached -V | awk '{print $2}') on 127.0.0.1:$MEMCACHED_PORT (pid $memcached_pid)"
for protocol in memcache_text memcache_binary; do
    mc_args=(-P "$protocol" -s 127.0.0.1 -p "$MEMCACHED_PORT" --ratio=1:4 "--test-time=$MC_TIME" -t 2 -c 25
        --pipeline=4 --key-maximum=100000 --hide-histogram)
    echo "==> running: target/release/kvbench ${mc_args[*]}"
    echo
    run_guarded "kvbench against memcached ($protocol)" "$KVBENCH" "${mc_args[@]}"
done
# The same text-protocol load with the floor's refill shape: each connection's next 16
# go out together once all 16 are answered (memtier refills per reply).
mc_args=(-P memcache_text -s 127.0.0.1 -p "$MEMCACHED_PORT" --ratio=1:4 "--test-time=$MC_TIME" -t 2 -c 25
    --pipeline=16 --refill=batch --key-maximum=100000 --hide-histogram)
echo "==> running: target/release/kvbench ${mc_args[*]}"
echo
run_guarded "kvbench against memcached (--refill=batch)" "$KVBENCH" "${mc_args[@]}"

STEP_TIME=$(((TEST_TIME + 2) / 3))
redis=(-s 127.0.0.1 -p "$REDIS_PORT")

run_step "open loop: 20 000 requests/s in all, Poisson arrivals; response time (from each request's scheduled send) beside service time" \
    "${redis[@]}" -t 2 -c 10 --rate=20000 --arrival=poisson "--test-time=$STEP_TIME" \
    --key-maximum=100000 --hide-histogram --print-percentiles=50,99,99.9

run_step "redis-benchmark's command line (kvbench redis-benchmark, or a link named redis-benchmark)" \
    redis-benchmark -h 127.0.0.1 -p "$REDIS_PORT" -t set,get -q -P 8 -n 200000
if command -v redis-benchmark >/dev/null 2>&1; then
    echo "==> the real redis-benchmark, same line, for comparison"
    # Its live line is redrawn with carriage returns even when -q: keep the results only.
    redis-benchmark -h 127.0.0.1 -p "$REDIS_PORT" -t set,get -q -P 8 -n 200000 |
        tr '\r' '\n' | grep -v 'rps=' || true
    echo
fi

P8_JSON=$OUT_DIR/pipeline8.json
REPORT=$OUT_DIR/report.html
rm -f "$P8_JSON" "$REPORT"
run_step "the first run's load again with --pipeline=8, for the report" \
    "${redis[@]}" --ratio=3:2 "--test-time=$STEP_TIME" -t 2 -c 25 --pipeline=8 \
    --key-maximum=100000 --hide-histogram "--json-out-file=$P8_JSON"
run_step "an HTML report of both result files" \
    report "$JSON" "$P8_JSON" --label=pipeline-1 --label=pipeline-8 -o "$REPORT"
echo "HTML report: $REPORT (one self-contained page; open it in a browser)"

MERGED_JSON=$OUT_DIR/merged.json
rm -f "$MERGED_JSON"
echo "==> three shards of one workload (--shard=I/3, one --start-at), as deploy/kubernetes/job.yaml runs them, merged exactly"
echo "    running: deploy/local-job.sh 3 --json-out-file=$MERGED_JSON -- ${redis[*]} --test-time=$STEP_TIME --rate=30000 -t 1 -c 10 --key-maximum=100000 --hide-histogram"
echo
run_guarded "the three-shard job" env "KVBENCH=$KVBENCH" LOCAL_JOB_START_IN=3 \
    bash deploy/local-job.sh 3 "--json-out-file=$MERGED_JSON" -- \
    "${redis[@]}" "--test-time=$STEP_TIME" --rate=30000 -t 1 -c 10 --key-maximum=100000 --hide-histogram
echo "Merged result of the three shards: $MERGED_JSON"

run_step "redis-cli's latency probe: one 2 s window, PING every 10 ms, figures in microseconds with percentiles" \
    latency -h 127.0.0.1 -p "$REDIS_PORT" --raw -i 2 --precision=us --percentiles=50,99
if command -v redis-cli >/dev/null 2>&1; then
    echo "==> redis-cli --latency --raw -i 2, the same probe in whole milliseconds, for comparison"
    redis-cli -h 127.0.0.1 -p "$REDIS_PORT" --latency --raw -i 2 || true
    echo
fi

run_step "redis-zbench-go's load: 20 000 sorted sets of 1..10 zipf-sized elements" \
    zbench -mode load -h 127.0.0.1 -p "$REDIS_PORT" -r 20000 -c 10
run_step "redis-zbench-go's query: ZRANGEBYLEX, 10 per MULTI/EXEC, 20 000 queries at 10 000/s" \
    zbench -mode query -h 127.0.0.1 -p "$REDIS_PORT" -r 20000 -c 10 -pipeline 10 -multi -n 20000 -rps 10000
