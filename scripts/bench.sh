#!/usr/bin/env bash
# `make bench`: client CPU and syscalls per request, kvbench against redis-benchmark (and
# memtier_benchmark where installed) and against the loopback floor (bench/floor.c; see
# scripts/bench-floor.sh), memory per connection at 10 000 connections, and p50 at one
# connection.
#
# One throwaway redis-server on a free port of 127.0.0.1. Each client does 1M requests
# per pipeline depth (1 and 16), with one thread and 50 connections:
#   kvbench          -t 1 -c 50 -n 20000 (x 50 clients = 1M), --ratio=1:1, 100k keys, 32 B
#   redis-benchmark  -c 50 -n 1000000 -t set,get (1M SETs then 1M GETs = 2M), 100k keys, 32 B
# A TLS row runs the same kvbench load against a second, TLS-only redis-server (its own
# instance, certificates made by openssl at start), to show what TLS costs per request.
# Open-loop rows run the same kvbench load at a fixed total rate (--rate): at 20 000
# requests/s (achieved rate, send lag p50/p99/p99.9, CPU and syscalls per request) beside a
# closed loop on 2 connections for the same time, and at 80% of the closed-loop pipeline-1
# throughput measured just before (CPU per request against it).
# A redis-benchmark front-end section runs `kvbench redis-benchmark` and the real
# redis-benchmark with the same flags (-t set,get, -c 50, -P 1 and 16, 1M requests per test)
# on the same server: CPU per request, syscalls per request and peak RSS.
# A cluster section (scripts/bench-cluster.sh) runs the same kvbench load with
# --cluster-mode against a throwaway three-master Redis Cluster, beside redis-benchmark
# --cluster on the same cluster: CPU and syscalls per request, and the masters' shares.
# A pool section (scripts/bench-pool.sh) runs the same kvbench load over memcache text
# against a pool of two throwaway memcached servers (--servers) beside one of them alone:
# CPU and syscalls per request, and the members' shares checked against kvbench's rows.
# CPU is user+sys of the client process only (/usr/bin/time). Syscalls come from
# `strace -c -f` in a separate run, since strace slows the client down and would spoil
# the timing. The server is stopped on exit, including Ctrl-C.
#
# Environment knobs (all optional):
#   KVBENCH_BENCH_DIR   where logs and strace summaries go (default: bench-out/ in the repo)
#   BENCH_PIPELINES     pipeline depths to run (default: "1 16")
#   BENCH_SCALE         divide the request counts by this, for a quick look (default: 1)
#   BENCH_OPEN_RATE     the open-loop row's rate (default: 20000)
#   BENCH_FLOOR_RUNS    runs of each floor comparison row, the best kept (default: 2)
#   BENCH_LATENCY_RUNS  runs of each one-connection latency figure, the median kept
#                       (default: 3)
#   BENCH_FLOOR_ONLY    set: only the floor, memory and one-connection latency sections
#   BENCH_ONLY          "redis-benchmark": only the redis-benchmark front-end section;
#                       "cluster": only the cluster section; "pool": only the pool section
#   BENCH_STEAL_DISTURBED_PCT  the share of CPU time taken by the host (steal) at which a
#                       section is called disturbed (default: 3)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

OUT_DIR=${KVBENCH_BENCH_DIR:-$ROOT/bench-out}
PIPELINES=${BENCH_PIPELINES:-"1 16"}
SCALE=${BENCH_SCALE:-1}
KVBENCH=$ROOT/target/release/kvbench
CLIENTS=50
KEYS=100000
DATA_SIZE=32
REQS_PER_CLIENT=$((20000 / SCALE))       # kvbench: per client
KV_REQUESTS=$((REQS_PER_CLIENT * CLIENTS)) # 1M at scale 1
RB_PER_TEST=$((1000000 / SCALE))          # redis-benchmark: per test (SET, then GET)
RB_REQUESTS=$((RB_PER_TEST * 2))
# kvbench's (and memtier_benchmark's) load, less the server and pipeline.
kv_base=(-t 1 -c "$CLIENTS" --ratio=1:1 "--key-maximum=$KEYS" --hide-histogram -d "$DATA_SIZE")
# strace slows clients several-fold; syscalls per request need far fewer requests.
STRACE_DIV=10
OPEN_RATE=${BENCH_OPEN_RATE:-20000}
OPEN_SECS=$((10 / SCALE > 2 ? 10 / SCALE : 2)) # seconds of each open-loop run
OPEN_STRACE_SECS=2
ONLY=${BENCH_ONLY:-}
case $ONLY in
'' | redis-benchmark | cluster | pool) ;;
*) echo "bench: error: BENCH_ONLY must be redis-benchmark, cluster or pool (or unset), got '$ONLY'" >&2; exit 1 ;;
esac

redis_pid=
redis_dir=
memcached_pid=
memcached_pids=() # the pool section's members
tls_redis_pid=
tls_dir=
cluster_pids=()
cluster_dir=

cleanup() {
    local pid
    for pid in "${cluster_pids[@]}"; do
        if kill -0 "$pid" 2>/dev/null; then
            kill "$pid" 2>/dev/null || true
            wait "$pid" 2>/dev/null || true
        fi
    done
    if [[ -n $cluster_dir ]]; then
        rm -rf "$cluster_dir"
    fi
    if [[ -n $tls_redis_pid ]] && kill -0 "$tls_redis_pid" 2>/dev/null; then
        kill "$tls_redis_pid" 2>/dev/null || true
        wait "$tls_redis_pid" 2>/dev/null || true
    fi
    if [[ -n $tls_dir ]]; then
        rm -rf "$tls_dir"
    fi
    for pid in "${memcached_pids[@]}" $memcached_pid; do
        if kill -0 "$pid" 2>/dev/null; then
            kill "$pid" 2>/dev/null || true
            wait "$pid" 2>/dev/null || true
        fi
    done
    if [[ -n $redis_pid ]] && kill -0 "$redis_pid" 2>/dev/null; then
        kill "$redis_pid" 2>/dev/null || true
        wait "$redis_pid" 2>/dev/null || true
    fi
    if [[ -n $redis_dir ]]; then
        rm -rf "$redis_dir"
    fi
}
trap cleanup EXIT
trap 'echo >&2; echo "bench: interrupted" >&2; exit 130' INT
trap 'exit 143' TERM

die() {
    echo "bench: error: $*" >&2
    exit 1
}

SCRIPT_NAME=bench
# shellcheck source=scripts/lib.sh
. "$ROOT/scripts/lib.sh"
# shellcheck source=scripts/bench-cluster.sh
. "$ROOT/scripts/bench-cluster.sh"
# shellcheck source=scripts/bench-pool.sh
. "$ROOT/scripts/bench-pool.sh"

# A CA and a server certificate for 127.0.0.1, made now and removed on exit.
make_certs() {
    local ext=$tls_dir/server.ext
    printf 'basicConstraints=critical,CA:FALSE\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n' >"$ext"
    if ! openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
        -subj /CN=kvbench-bench-ca -keyout "$tls_dir/ca.key" -out "$tls_dir/ca.pem" 2>/dev/null ||
        ! openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
            -subj /CN=localhost -keyout "$tls_dir/server.key" -out "$tls_dir/server.csr" 2>/dev/null ||
        ! openssl x509 -req -in "$tls_dir/server.csr" -CA "$tls_dir/ca.pem" -CAkey "$tls_dir/ca.key" \
            -set_serial 2 -days 2 -extfile "$ext" -out "$tls_dir/server.pem" 2>/dev/null; then
        die "openssl could not make the TLS certificates"
    fi
}

# A second redis-server, TLS only (--port 0), for the TLS row.
start_tls_redis() {
    local attempt port
    tls_dir=$(mktemp -d "${TMPDIR:-/tmp}/kvbench-bench-tls.XXXXXX")
    make_certs
    for attempt in 1 2 3 4 5; do
        port=$(free_port)
        setsid redis-server --port 0 --tls-port "$port" --bind 127.0.0.1 --save '' --appendonly no \
            --tls-cert-file "$tls_dir/server.pem" --tls-key-file "$tls_dir/server.key" \
            --tls-ca-cert-file "$tls_dir/ca.pem" --tls-auth-clients no \
            --dir "$tls_dir" --logfile "$tls_dir/redis.log" </dev/null &
        tls_redis_pid=$!
        if await_pong "$tls_redis_pid" -h 127.0.0.1 -p "$port" --tls --cacert "$tls_dir/ca.pem"; then
            REDIS_TLS_PORT=$port
            return 0
        fi
        kill "$tls_redis_pid" 2>/dev/null || true
        wait "$tls_redis_pid" 2>/dev/null || true
        tls_redis_pid=
        echo "bench: TLS redis-server did not come up on port $port (attempt $attempt)" >&2
        tail -n 5 "$tls_dir/redis.log" >&2 2>/dev/null || true
    done
    die "could not start the TLS redis-server"
}

# The same starting state for every run: empty database (the TLS server's during TLS rows;
# during the cluster section every master's, with its statistics zeroed; during the pool
# section every member's, likewise).
RESET_TLS=
RESET_CLUSTER=
RESET_POOL=
reset_server() {
    local cli=(redis-cli -h 127.0.0.1 -p "$REDIS_PORT") port
    if [[ -n $RESET_POOL ]]; then
        reset_pool
        return 0
    fi
    if [[ -n $RESET_CLUSTER ]]; then
        for port in "${CLUSTER_PORTS[@]}"; do
            [[ $(redis-cli -h 127.0.0.1 -p "$port" FLUSHALL) == OK ]] || die "FLUSHALL failed on cluster node $port"
            [[ $(redis-cli -h 127.0.0.1 -p "$port" CONFIG RESETSTAT) == OK ]] || die "CONFIG RESETSTAT failed on cluster node $port"
        done
        return 0
    fi
    if [[ -n $RESET_TLS ]]; then
        cli=(redis-cli -h 127.0.0.1 -p "$REDIS_TLS_PORT" --tls --cacert "$tls_dir/ca.pem")
    fi
    [[ $("${cli[@]}" FLUSHALL) == OK ]] || die "FLUSHALL failed"
}

# Sends one memcached command line to the memcached on `port` and prints the answer up
# to END, OK, RESET or ERROR (the text protocol, over bash's /dev/tcp).
memcached_command() { # port command
    local line
    exec 4<>"/dev/tcp/127.0.0.1/$1" || die "cannot reach memcached on port $1"
    printf '%s\r\n' "$2" >&4
    while IFS= read -r -t 10 line <&4; do
        line=${line%$'\r'}
        printf '%s\n' "$line"
        [[ $line == END || $line == OK || $line == RESET || $line == ERROR ]] && break
    done
    exec 4<&-
}

# A section's rows ("tool pipeline requests user sys wall syscalls straced_requests") as a
# table: two parts of an awk program, shared by the cluster and pool sections.
# ROW_TABLE_HEADER goes in BEGIN; ROW_TABLE_LINE is the per-line action, which also keeps
# cpu_per[tool, p] (CPU s per 1M requests), sc[tool, p] (syscalls per request) and the
# pipelines in order[1..n] for the section's END.
ROW_TABLE_HEADER='printf "%-24s %8s %10s %8s %13s %8s %12s\n", "tool", "pipeline", "requests", "CPU s", "CPU s/1M req", "wall s", "syscalls/req"'
ROW_TABLE_LINE='{
    tool = $1; p = $2; cpu = $4 + $5; per_m = cpu / $3 * 1e6
    printf "%-24s %8s %10d %8.2f %13.3f %8.2f %12.2f\n", tool, p, $3, cpu, per_m, $6, $7 / $8
    cpu_per[tool, p] = per_m; sc[tool, p] = $7 / $8
    if (!(p in seen)) { seen[p] = 1; order[++n] = p }
}'

# Run a client once under /usr/bin/time; sets CPU_USER, CPU_SYS and WALL (seconds) and
# MAXRSS (peak resident set, KiB).
timed_run() { # name cmd...
    local name=$1 tfile
    shift
    tfile=$OUT_DIR/$name.time
    reset_server
    if ! /usr/bin/time -f '%U %S %e %M' -o "$tfile" "$@" >"$OUT_DIR/$name.out" 2>"$OUT_DIR/$name.err"; then
        echo "bench: this run failed: $*" >&2
        tail -n 20 "$OUT_DIR/$name.out" "$OUT_DIR/$name.err" "$tfile" >&2 || true
        die "$name failed"
    fi
    # /usr/bin/time writes its numbers on the last line of the -o file.
    read -r CPU_USER CPU_SYS WALL MAXRSS < <(tail -n 1 "$tfile")
    [[ -n ${WALL:-} ]] || die "no timing in $tfile"
}

# Run a client once under strace -c -f; sets SYSCALLS (the total count, all threads).
strace_run() { # name cmd...
    local name=$1 sfile
    shift
    sfile=$OUT_DIR/$name.strace
    reset_server
    if ! strace -c -f -o "$sfile" "$@" >"$OUT_DIR/$name.strace.out" 2>"$OUT_DIR/$name.strace.err"; then
        echo "bench: this run under strace failed: $*" >&2
        tail -n 20 "$OUT_DIR/$name.strace.out" "$OUT_DIR/$name.strace.err" >&2 || true
        die "$name failed under strace"
    fi
    # Last line of the summary: "100.00  secs  usecs/call  CALLS  [errors]  total".
    SYSCALLS=$(awk '$NF == "total" { print $4 }' "$sfile")
    [[ $SYSCALLS =~ ^[0-9]+$ ]] || die "no syscall total in $sfile"
}

# The host's share of this VM's CPU while a section ran: "steal" in /proc/stat, time the
# guest's CPUs were ready to run but the hypervisor ran something else. A stolen CPU
# stalls whichever of client or server was on it, so the section's CPU ratios and
# latencies are disturbed (on 2026-12-01 the host took 12 % of the VM's CPU time during
# floor comparisons, and a full run read a redis-benchmark ratio of 1.17 where quiet runs
# read 0.54-0.67). steal_mark starts a section; steal_line ends it with one line.
# Nothing is printed where /proc/stat has no steal column.
STEAL_DISTURBED_PCT=${BENCH_STEAL_DISTURBED_PCT:-3}
cpu_ticks() { # -> "all_ticks steal_ticks" over every CPU, or nothing
    awk '$1 == "cpu" && NF >= 9 { t = 0; for (i = 2; i <= 9; i++) t += $i; print t, $9; exit }' /proc/stat 2>/dev/null
}
steal_mark() {
    read -r STEAL_T0 STEAL_S0 < <(cpu_ticks) || STEAL_T0=
}
steal_line() { # section
    local t s
    [[ -n ${STEAL_T0:-} ]] || return 0
    read -r t s < <(cpu_ticks) || return 0
    awk -v t=$((t - STEAL_T0)) -v s=$((s - STEAL_S0)) -v name="$1" -v limit="$STEAL_DISTURBED_PCT" 'BEGIN {
        pct = t > 0 ? 100 * s / t : 0
        printf "steal during %s: %.1f %% of the VM'"'"'s CPU time", name, pct
        if (pct >= limit) printf " (at or over %s %%: the host took CPU from this VM; these figures are disturbed, run again)", limit
        printf "\n" }'
}

# The redis-benchmark front end: `kvbench redis-benchmark` and the real redis-benchmark
# with the same command line, same server, one after the other at each pipeline depth.
rb_frontend_section() {
    local p name tool rb_rows=() # "tool pipeline requests user sys wall maxrss syscalls straced"
    steal_mark
    for p in $PIPELINES; do
        local args=(-h 127.0.0.1 -p "$REDIS_PORT" -c "$CLIENTS" -P "$p" -t "set,get" -d "$DATA_SIZE"
            -r "$KEYS" --threads 1 -q)
        for tool in kvbench-rb redis-benchmark; do
            local cmd=(redis-benchmark "${args[@]}")
            [[ $tool == kvbench-rb ]] && cmd=("$KVBENCH" redis-benchmark "${args[@]}")
            name=$tool-frontend-p$p
            echo "==> $tool, pipeline $p: $RB_REQUESTS requests timed, $((RB_REQUESTS / STRACE_DIV)) under strace"
            timed_run "$name" "${cmd[@]}" -n "$RB_PER_TEST"
            local user=$CPU_USER sys=$CPU_SYS wall=$WALL rss=$MAXRSS
            strace_run "$name" "${cmd[@]}" -n "$((RB_PER_TEST / STRACE_DIV))"
            rb_rows+=("$tool $p $RB_REQUESTS $user $sys $wall $rss $SYSCALLS $((RB_REQUESTS / STRACE_DIV))")
        done
    done
    echo
    echo "redis-benchmark front end: the same command line (-t set,get -c $CLIENTS -d $DATA_SIZE -r $KEYS --threads 1 -q), same server"
    printf '%s\n' "${rb_rows[@]}" | awk '
        BEGIN {
            printf "%-18s %8s %10s %8s %13s %8s %12s %12s\n",
                "tool", "pipeline", "requests", "CPU s", "CPU s/1M req", "wall s", "peak RSS KiB", "syscalls/req"
        }
        {
            tool = $1; p = $2; cpu = $4 + $5; per_m = cpu / $3 * 1e6
            printf "%-18s %8s %10d %8.2f %13.3f %8.2f %12d %12.2f\n", tool, p, $3, cpu, per_m, $6, $7, $8 / $9
            cpu_per[tool, p] = per_m; rss[tool, p] = $7; sc[tool, p] = $8 / $9
            if (!(p in seen)) { seen[p] = 1; order[++n] = p }
        }
        END {
            print ""
            for (i = 1; i <= n; i++) {
                p = order[i]
                if (cpu_per["redis-benchmark", p] > 0 && sc["redis-benchmark", p] > 0 && rss["redis-benchmark", p] > 0)
                    printf "pipeline %-3s kvbench redis-benchmark / redis-benchmark: CPU per request %.2f (goal <= 0.80), syscalls per request %.2f, peak RSS %.2f (goal <= 1.00)\n",
                        p, cpu_per["kvbench-rb", p] / cpu_per["redis-benchmark", p],
                        sc["kvbench-rb", p] / sc["redis-benchmark", p], rss["kvbench-rb", p] / rss["redis-benchmark", p]
            }
        }'
    steal_line "the redis-benchmark front-end section"
}

echo "==> checking dependencies"
bash scripts/ensure-deps.sh
if ! command -v cargo >/dev/null 2>&1 && [[ -r "$HOME/.cargo/env" ]]; then
    # shellcheck disable=SC1091
    . "$HOME/.cargo/env"
fi
echo "==> building kvbench (release)"
cargo build --release || die "cargo build --release failed; see the compiler output above"
[[ -x $KVBENCH ]] || die "$KVBENCH missing after the build"

mkdir -p "$OUT_DIR"
echo "==> starting a throwaway redis-server"
start_redis
echo "bench: redis-server $(redis-server --version | awk '{print $3}' | sed 's/^v=//') on 127.0.0.1:$REDIS_PORT (pid $redis_pid)"
echo "bench: logs and strace summaries in $OUT_DIR"
if [[ $ONLY == redis-benchmark ]]; then
    rb_frontend_section
    exit 0
fi
if [[ $ONLY == cluster ]]; then
    cluster_section
    exit 0
fi
if [[ $ONLY == pool ]]; then
    pool_section
    exit 0
fi
start_memcached 1
echo "bench: memcached $(memcached -V | awk '{print $2}') on 127.0.0.1:$MEMCACHED_PORT (pid $memcached_pid)"
start_tls_redis
echo "bench: TLS-only redis-server on 127.0.0.1:$REDIS_TLS_PORT (pid $tls_redis_pid)"
if [[ -n ${BENCH_FLOOR_ONLY:-} ]]; then
    # shellcheck source=scripts/bench-floor.sh
    . "$ROOT/scripts/bench-floor.sh"
    exit 0
fi

rows=() # "tool pipeline requests user sys wall syscalls straced_requests"
steal_mark
for p in $PIPELINES; do
    kv=("$KVBENCH" -s 127.0.0.1 -p "$REDIS_PORT" "${kv_base[@]}" "--pipeline=$p")
    rb=(redis-benchmark -h 127.0.0.1 -p "$REDIS_PORT" -c "$CLIENTS" -P "$p"
        -t "set,get" -d "$DATA_SIZE" -r "$KEYS" --threads 1 -q)

    echo "==> kvbench, pipeline $p: $KV_REQUESTS requests timed, $((KV_REQUESTS / STRACE_DIV)) under strace"
    timed_run "kvbench-p$p" "${kv[@]}" -n "$REQS_PER_CLIENT"
    strace_run "kvbench-p$p" "${kv[@]}" -n "$((REQS_PER_CLIENT / STRACE_DIV))"
    rows+=("kvbench $p $KV_REQUESTS $CPU_USER $CPU_SYS $WALL $SYSCALLS $((KV_REQUESTS / STRACE_DIV))")

    echo "==> redis-benchmark, pipeline $p: $RB_REQUESTS requests timed, $((RB_REQUESTS / STRACE_DIV)) under strace"
    timed_run "redis-benchmark-p$p" "${rb[@]}" -n "$RB_PER_TEST"
    strace_run "redis-benchmark-p$p" "${rb[@]}" -n "$((RB_PER_TEST / STRACE_DIV))"
    rows+=("redis-benchmark $p $RB_REQUESTS $CPU_USER $CPU_SYS $WALL $SYSCALLS $((RB_REQUESTS / STRACE_DIV))")

    # memtier_benchmark, where installed: kvbench's own command line is memtier's, so the
    # same flags run it on the same server.
    if command -v memtier_benchmark >/dev/null 2>&1; then
        mt=(memtier_benchmark -s 127.0.0.1 -p "$REDIS_PORT" "${kv_base[@]}" "--pipeline=$p")
        echo "==> memtier_benchmark, pipeline $p: $KV_REQUESTS requests timed, $((KV_REQUESTS / STRACE_DIV)) under strace"
        timed_run "memtier-p$p" "${mt[@]}" -n "$REQS_PER_CLIENT"
        strace_run "memtier-p$p" "${mt[@]}" -n "$((REQS_PER_CLIENT / STRACE_DIV))"
        rows+=("memtier_benchmark $p $KV_REQUESTS $CPU_USER $CPU_SYS $WALL $SYSCALLS $((KV_REQUESTS / STRACE_DIV))")
    fi

    # The same kvbench load against memcached, both protocols; there is no memcached
    # counterpart of redis-benchmark, so these compare against redis-benchmark's Redis row.
    for proto in memcache_text memcache_binary; do
        mc=("$KVBENCH" -P "$proto" -s 127.0.0.1 -p "$MEMCACHED_PORT" "${kv_base[@]}" "--pipeline=$p")
        echo "==> kvbench $proto, pipeline $p: $KV_REQUESTS requests timed, $((KV_REQUESTS / STRACE_DIV)) under strace"
        timed_run "kvbench-$proto-p$p" "${mc[@]}" -n "$REQS_PER_CLIENT"
        strace_run "kvbench-$proto-p$p" "${mc[@]}" -n "$((REQS_PER_CLIENT / STRACE_DIV))"
        rows+=("kvbench-$proto $p $KV_REQUESTS $CPU_USER $CPU_SYS $WALL $SYSCALLS $((KV_REQUESTS / STRACE_DIV))")
    done

    # The same kvbench load over TLS (rustls), against the TLS-only redis-server.
    tls=("$KVBENCH" -s 127.0.0.1 -p "$REDIS_TLS_PORT" --tls --cacert "$tls_dir/ca.pem"
        "${kv_base[@]}" "--pipeline=$p")
    echo "==> kvbench over TLS, pipeline $p: $KV_REQUESTS requests timed, $((KV_REQUESTS / STRACE_DIV)) under strace"
    RESET_TLS=1
    timed_run "kvbench-tls-p$p" "${tls[@]}" -n "$REQS_PER_CLIENT"
    strace_run "kvbench-tls-p$p" "${tls[@]}" -n "$((REQS_PER_CLIENT / STRACE_DIV))"
    RESET_TLS=
    rows+=("kvbench-tls $p $KV_REQUESTS $CPU_USER $CPU_SYS $WALL $SYSCALLS $((KV_REQUESTS / STRACE_DIV))")
done

echo
echo "Client CPU (user+sys of the client process) and syscalls, 1 thread, $CLIENTS connections, ${DATA_SIZE} B values, $KEYS keys"
printf '%s\n' "${rows[@]}" | awk '
    {
        tool = $1; p = $2; reqs = $3; cpu = $4 + $5; wall = $6; sc = $7; sreqs = $8
        per_m = cpu / reqs * 1e6
        printf "%-24s %8s %10d %8.2f %13.3f %8.2f %12d %11.2f\n",
            tool, p, reqs, cpu, per_m, wall, sc, sc / sreqs
        cpu_per[tool, p] = per_m
        sc_per[tool, p] = sc / sreqs
        if (!(p in seen)) { seen[p] = 1; order[++n] = p }
    }
    BEGIN {
        mc_tools["kvbench-memcache_text"] = 1; mc_tools["kvbench-memcache_binary"] = 1
        printf "%-24s %8s %10s %8s %13s %8s %12s %11s\n",
            "tool", "pipeline", "requests", "CPU s", "CPU s/1M req", "wall s", "syscalls*", "syscalls/req"
    }
    END {
        print ""
        for (i = 1; i <= n; i++) {
            p = order[i]
            if (cpu_per["redis-benchmark", p] > 0)
                printf "pipeline %-3s kvbench/redis-benchmark CPU per request: %.2f", p,
                    cpu_per["kvbench", p] / cpu_per["redis-benchmark", p]
            else
                printf "pipeline %-3s kvbench/redis-benchmark CPU per request: n/a (redis-benchmark used no measurable CPU)", p
            if (sc_per["redis-benchmark", p] > 0)
                printf ", syscalls per request: %.2f", sc_per["kvbench", p] / sc_per["redis-benchmark", p]
            printf "\n"
            if (cpu_per["memtier_benchmark", p] > 0)
                printf "pipeline %-3s kvbench/memtier_benchmark CPU per request: %.2f, syscalls per request: %.2f vs %.2f\n", p,
                    cpu_per["kvbench", p] / cpu_per["memtier_benchmark", p], sc_per["kvbench", p], sc_per["memtier_benchmark", p]
            if (cpu_per["kvbench", p] > 0 && cpu_per["kvbench-tls", p] > 0)
                printf "pipeline %-3s kvbench TLS/plain CPU per request: %.2f (%.3f vs %.3f CPU s per 1M requests), syscalls per request: %.2f vs %.2f\n",
                    p, cpu_per["kvbench-tls", p] / cpu_per["kvbench", p], cpu_per["kvbench-tls", p],
                    cpu_per["kvbench", p], sc_per["kvbench-tls", p], sc_per["kvbench", p]
            for (t in mc_tools) {
                if (cpu_per[t, p] > 0 && cpu_per["redis-benchmark", p] > 0)
                    printf "pipeline %-3s %s/redis-benchmark(Redis) CPU per request: %.2f\n", p, t,
                        cpu_per[t, p] / cpu_per["redis-benchmark", p]
            }
        }
    }'
steal_line "the CPU and syscall rows"

# Open loop: kvbench at a fixed total rate on the same connections. Each run's JSON gives
# the requests answered, the achieved rate and the send lag (actual - intended send time,
# p50/p99/p99.9); CPU per request is over all requests the process sent (no warm-up, so
# none are left out). Beside it, a closed loop of the same length on 2 connections (the
# issue's comparison: about the open loop's throughput on a loaded machine, more on a quiet
# one; its rate is printed so the comparison can be judged).
json_figures() { # json -> "count achieved_pct late_pct lag_p50_ms lag_p99_ms lag_p99.9_ms"
    python3 - "$1" <<'PY'
import json, sys
block = json.load(open(sys.argv[1]))["ALL STATS"]
s = block["Schedule"]
print(block["Totals"]["Count"], s["Achieved Percent"], s["Late Percent"],
      s["Lag"]["p50.00"], s["Lag"]["p99.00"], s["Lag"]["p99.90"])
PY
}
closed_ops=$(awk '/^Totals/ { print int($2); exit }' "$OUT_DIR/kvbench-p1.out" 2>/dev/null || echo 0)
matched_rate=$(( closed_ops * 8 / 10 / 1000 * 1000 ))
(( matched_rate >= 1000 )) || matched_rate=1000
open_rows=() # "rate count achieved late lag50 lag99 lag999 cpu syscalls straced_count"
steal_mark
for rate in "$OPEN_RATE" "$matched_rate"; do
    kv=("$KVBENCH" -s 127.0.0.1 -p "$REDIS_PORT" "${kv_base[@]}" --pipeline=1 "--rate=$rate"
        --print-percentiles=50,99,99.9)
    name=kvbench-open-$rate
    echo "==> kvbench open loop at $rate requests/s: $OPEN_SECS s timed, $OPEN_STRACE_SECS s under strace"
    timed_run "$name" "${kv[@]}" "--test-time=$OPEN_SECS" "--json-out-file=$OUT_DIR/$name.json"
    read -r count achieved late lag50 lag99 lag999 < <(json_figures "$OUT_DIR/$name.json")
    cpu=$(awk -v u="$CPU_USER" -v s="$CPU_SYS" 'BEGIN { print u + s }')
    strace_run "$name" "${kv[@]}" "--test-time=$OPEN_STRACE_SECS" "--json-out-file=$OUT_DIR/$name.strace.json"
    read -r scount _ < <(json_figures "$OUT_DIR/$name.strace.json")
    open_rows+=("$rate $count $achieved $late $lag50 $lag99 $lag999 $cpu $SYSCALLS $scount")
done
# The first rate again with --busy-poll: the send lag when the worker never sleeps through
# a due time (and what the spinning core costs).
name=kvbench-open-$OPEN_RATE-busy-poll
echo "==> kvbench open loop at $OPEN_RATE requests/s with --busy-poll=100: $OPEN_SECS s timed"
timed_run "$name" "$KVBENCH" -s 127.0.0.1 -p "$REDIS_PORT" "${kv_base[@]}" --pipeline=1 "--rate=$OPEN_RATE" \
    --busy-poll=100 "--test-time=$OPEN_SECS" "--json-out-file=$OUT_DIR/$name.json"
read -r bcount _ _ blag50 blag99 blag999 < <(json_figures "$OUT_DIR/$name.json")
busy_open=$(awk -v u="$CPU_USER" -v s="$CPU_SYS" -v n="$bcount" -v a="$blag50" -v b="$blag99" -v c="$blag999" \
    'BEGIN { printf "lag p50 / p99 / p99.9 %.3f / %.3f / %.3f ms, CPU %.2f us/req", a, b, c, (u + s) / n * 1e6 }')
echo "==> kvbench closed loop on 2 connections, pipeline 1: $OPEN_SECS s timed"
timed_run kvbench-closed-c2 "$KVBENCH" -s 127.0.0.1 -p "$REDIS_PORT" -t 1 -c 2 --ratio=1:1 \
    "--key-maximum=$KEYS" --hide-histogram -d "$DATA_SIZE" --pipeline=1 "--test-time=$OPEN_SECS"
closed_c2=$(awk -v u="$CPU_USER" -v s="$CPU_SYS" -v secs="$OPEN_SECS" '/^Totals/ {
    ops = $2; printf "%d %.2f", ops, (u + s) / (ops * secs) * 1e6; exit }' "$OUT_DIR/kvbench-closed-c2.out")
echo
echo "Open loop (--rate, 1 thread, $CLIENTS connections, pipeline 1): closed loop pipeline 1 answered $closed_ops requests/s"
printf '%s\n' "${open_rows[@]}" | awk -v closed_cpu="$(printf '%s\n' "${rows[@]}" | awk '$1 == "kvbench" && $2 == 1 { print ($4 + $5) / $3 * 1e6; exit }')" \
    -v closed_c2="$closed_c2" '
    BEGIN {
        printf "%-10s %10s %10s %7s %12s %12s %12s %12s %13s\n",
            "rate", "requests", "achieved%", "late%", "lag p50 ms", "lag p99 ms", "lag p99.9 ms",
            "CPU us/req", "syscalls/req"
        split(closed_c2, c2, " ")
    }
    {
        per_req = $8 / $2 * 1e6
        printf "%-10s %10d %10.2f %7.2f %12.3f %12.3f %12.3f %12.2f %13.2f\n",
            $1, $2, $3, $4, $5, $6, $7, per_req, $9 / $10
        if (NR == 1) { first_rate = $1; first_cpu = per_req }
        last_rate = $1; last_cpu = per_req
    }
    END {
        if (c2[2] > 0)
            printf "closed loop, 2 connections: %d requests/s, CPU %.2f us/req; open loop at %s requests/s / it: %.2f\n",
                c2[1], c2[2], first_rate, first_cpu / c2[2]
        if (closed_cpu > 0)
            printf "open loop at %s requests/s / closed loop pipeline 1 (50 connections): CPU per request %.2f (%.2f vs %.2f us)\n",
                last_rate, last_cpu / closed_cpu, last_cpu, closed_cpu
    }'

echo "open loop at $OPEN_RATE requests/s with --busy-poll=100: $busy_open"
steal_line "the open-loop rows"

echo
rb_frontend_section

echo
cluster_section

echo
pool_section

# The loopback floor, memory per connection and the latency kvbench adds at one connection.
# shellcheck source=scripts/bench-floor.sh
. "$ROOT/scripts/bench-floor.sh"

# Allocation check: the same client run at two lengths under valgrind's DHAT. Any
# allocation per request would show as about one block per extra request; what remains
# is the once-a-second bookkeeping (snapshots, summaries), which grows with run time only.
echo
if ! command -v valgrind >/dev/null 2>&1; then
    if [[ $(id -u) -eq 0 ]]; then
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind >/dev/null || true
    fi
fi
if command -v valgrind >/dev/null 2>&1; then
    declare -A blocks
    for n in 2000 20000; do
        reset_server
        valgrind --tool=dhat --dhat-out-file="$OUT_DIR/dhat.$n.json" \
            "$KVBENCH" -s 127.0.0.1 -p "$REDIS_PORT" -t 1 -c 1 -n "$n" --ratio=1:1 \
            "--key-maximum=$KEYS" --hide-histogram >/dev/null 2>"$OUT_DIR/dhat.$n.err" \
            || die "kvbench under valgrind failed; see $OUT_DIR/dhat.$n.err"
        blocks[$n]=$(sed -n 's/.*Total: *[0-9,]* bytes in \([0-9,]*\) blocks.*/\1/p' "$OUT_DIR/dhat.$n.err" | tr -d ,)
    done
    awk -v a="${blocks[2000]}" -v b="${blocks[20000]}" 'BEGIN {
        printf "allocation check: %d blocks for 2000 requests, %d for 20000: %.4f allocations per extra request\n",
            a, b, (b - a) / 18000 }'
    # Open loop: the same duration at two rates, so the once-a-second bookkeeping is the
    # same in both and only the requests differ.
    declare -A open_blocks open_counts
    for rate in 500 4000; do
        reset_server
        valgrind --tool=dhat --dhat-out-file="$OUT_DIR/dhat.open.$rate.json" \
            "$KVBENCH" -s 127.0.0.1 -p "$REDIS_PORT" -t 1 -c 1 --test-time=3 "--rate=$rate" --ratio=1:1 \
            "--key-maximum=$KEYS" --hide-histogram "--json-out-file=$OUT_DIR/dhat.open.$rate.out.json" \
            >/dev/null 2>"$OUT_DIR/dhat.open.$rate.err" \
            || die "kvbench --rate under valgrind failed; see $OUT_DIR/dhat.open.$rate.err"
        open_blocks[$rate]=$(sed -n 's/.*Total: *[0-9,]* bytes in \([0-9,]*\) blocks.*/\1/p' "$OUT_DIR/dhat.open.$rate.err" | tr -d ,)
        read -r open_counts[$rate] _ < <(json_figures "$OUT_DIR/dhat.open.$rate.out.json")
    done
    awk -v a="${open_blocks[500]}" -v b="${open_blocks[4000]}" -v na="${open_counts[500]}" -v nb="${open_counts[4000]}" 'BEGIN {
        printf "allocation check, open loop: %d blocks for %d requests, %d for %d in the same 3 s: %.4f allocations per extra request\n",
            a, na, b, nb, (b - a) / (nb - na) }'
else
    echo "allocation check: skipped (valgrind is not installed)"
fi
