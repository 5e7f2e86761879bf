# Sourced by scripts/bench.sh: the cluster section. kvbench --cluster-mode against a
# throwaway three-master Redis Cluster on loopback, beside `redis-benchmark --cluster`
# (and memtier_benchmark --cluster-mode, where the installed one has it) on the same
# cluster, with the same load as bench.sh's main rows: CPU seconds per million requests,
# syscalls per request, and how the three masters shared kvbench's SETs and GETs
# (INFO commandstats), which shows the requests went where their keys' slots live.
#
# Uses lib.sh's await_pong and bench.sh's timed_run, strace_run, steal_mark, steal_line, die and its load
# variables; it sets cluster_pids and cluster_dir, which bench.sh's cleanup stops and
# removes.

CLUSTER_PORTS=()

# One cluster-enabled redis-server on a free port with a free bus port (cluster-port,
# Redis 7: the default bus port, port + 10000, may be taken or past 65535).
start_cluster_node() { # index
    local dir=$cluster_dir/$1 attempt port bus pid
    mkdir -p "$dir"
    for attempt in 1 2 3 4 5; do
        port=$(free_port)
        bus=$(free_port)
        [[ $port != "$bus" ]] || continue
        setsid redis-server --port "$port" --cluster-port "$bus" --bind 127.0.0.1 \
            --cluster-enabled yes --cluster-config-file nodes.conf --cluster-node-timeout 5000 \
            --save '' --appendonly no --dir "$dir" --logfile "$dir/redis.log" </dev/null &
        pid=$!
        if await_pong "$pid" -h 127.0.0.1 -p "$port"; then
            cluster_pids+=("$pid")
            CLUSTER_PORTS+=("$port")
            return 0
        fi
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
        echo "bench: cluster node $1 did not come up on port $port (attempt $attempt):" >&2
        tail -n 5 "$dir/redis.log" >&2 2>/dev/null || true
    done
    die "could not start cluster node $1; see the log lines above"
}

# Three masters sharing the 16384 slots, ready once every node says cluster_state:ok.
start_cluster() {
    local i port addrs=() deadline ok
    cluster_dir=$(mktemp -d "${TMPDIR:-/tmp}/kvbench-bench-cluster.XXXXXX")
    for i in 0 1 2; do
        start_cluster_node "$i"
    done
    for port in "${CLUSTER_PORTS[@]}"; do
        addrs+=("127.0.0.1:$port")
    done
    redis-cli --cluster create "${addrs[@]}" --cluster-yes >"$OUT_DIR/cluster-create.log" 2>&1 ||
        die "redis-cli --cluster create failed; see $OUT_DIR/cluster-create.log"
    deadline=$((SECONDS + 30))
    while ((SECONDS < deadline)); do
        ok=0
        for port in "${CLUSTER_PORTS[@]}"; do
            redis-cli -h 127.0.0.1 -p "$port" CLUSTER INFO 2>/dev/null | grep -q '^cluster_state:ok' && ok=$((ok + 1))
        done
        ((ok == 3)) && return 0
        sleep 0.1
    done
    die "the cluster did not reach cluster_state:ok within 30 s"
}

# SET and GET calls each master has served since its last reset, space-separated.
cluster_calls() {
    local port
    for port in "${CLUSTER_PORTS[@]}"; do
        redis-cli -h 127.0.0.1 -p "$port" INFO commandstats |
            awk -F'[:=,]' '/^cmdstat_(set|get):/ { n += $3 } END { printf "%d ", n }'
    done
}

cluster_section() {
    local p name user sys wall calls cluster_rows=() splits=()
    # cluster_rows: "tool pipeline requests user sys wall syscalls straced_requests"
    echo "==> starting a throwaway three-master Redis Cluster"
    start_cluster
    echo "bench: cluster masters on 127.0.0.1:${CLUSTER_PORTS[*]} (pids ${cluster_pids[*]})"
    local has_memtier=
    if command -v memtier_benchmark >/dev/null 2>&1 &&
        memtier_benchmark --help 2>&1 | grep -q -- '--cluster-mode'; then
        has_memtier=1
    fi
    RESET_CLUSTER=1
    steal_mark
    for p in $PIPELINES; do
        local kv=("$KVBENCH" --cluster-mode -s 127.0.0.1 -p "${CLUSTER_PORTS[0]}" "${kv_base[@]}" "--pipeline=$p")
        local rb=(redis-benchmark --cluster -h 127.0.0.1 -p "${CLUSTER_PORTS[0]}" -c "$CLIENTS" -P "$p"
            -t "set,get" -d "$DATA_SIZE" -r "$KEYS" --threads 1 -q)
        local mt=(memtier_benchmark --cluster-mode -s 127.0.0.1 -p "${CLUSTER_PORTS[0]}" "${kv_base[@]}" "--pipeline=$p")

        name=kvbench-cluster-p$p
        echo "==> kvbench --cluster-mode, pipeline $p: $KV_REQUESTS requests timed, $((KV_REQUESTS / STRACE_DIV)) under strace"
        timed_run "$name" "${kv[@]}" -n "$REQS_PER_CLIENT"
        user=$CPU_USER sys=$CPU_SYS wall=$WALL
        calls=$(cluster_calls)
        splits+=("$p $calls")
        strace_run "$name" "${kv[@]}" -n "$((REQS_PER_CLIENT / STRACE_DIV))"
        cluster_rows+=("kvbench-cluster $p $KV_REQUESTS $user $sys $wall $SYSCALLS $((KV_REQUESTS / STRACE_DIV))")

        name=redis-benchmark-cluster-p$p
        echo "==> redis-benchmark --cluster, pipeline $p: $RB_REQUESTS requests timed, $((RB_REQUESTS / STRACE_DIV)) under strace"
        timed_run "$name" "${rb[@]}" -n "$RB_PER_TEST"
        user=$CPU_USER sys=$CPU_SYS wall=$WALL
        strace_run "$name" "${rb[@]}" -n "$((RB_PER_TEST / STRACE_DIV))"
        cluster_rows+=("redis-benchmark-cluster $p $RB_REQUESTS $user $sys $wall $SYSCALLS $((RB_REQUESTS / STRACE_DIV))")

        if [[ -n $has_memtier ]]; then
            name=memtier-cluster-p$p
            echo "==> memtier_benchmark --cluster-mode, pipeline $p: $KV_REQUESTS requests timed, $((KV_REQUESTS / STRACE_DIV)) under strace"
            timed_run "$name" "${mt[@]}" -n "$REQS_PER_CLIENT"
            user=$CPU_USER sys=$CPU_SYS wall=$WALL
            strace_run "$name" "${mt[@]}" -n "$((REQS_PER_CLIENT / STRACE_DIV))"
            cluster_rows+=("memtier-cluster $p $KV_REQUESTS $user $sys $wall $SYSCALLS $((KV_REQUESTS / STRACE_DIV))")
        fi
    done
    RESET_CLUSTER=
    echo
    echo "Cluster mode: three masters, 1 thread, $CLIENTS clients (kvbench and memtier: a connection to every master per client; redis-benchmark: clients spread over the masters), ${DATA_SIZE} B values, $KEYS keys"
    [[ -n $has_memtier ]] || echo "(memtier_benchmark: not installed, or built without --cluster-mode)"
    # kvbench's plain single-server rows from bench.sh's main table (`rows`), when they
    # ran, for what cluster mode itself costs per request.
    local plain
    plain=$(printf '%s\n' "${rows[@]:-}" | awk '$1 == "kvbench" { printf "%s=%s ", $2, ($4 + $5) / $3 * 1e6 }')
    printf '%s\n' "${cluster_rows[@]}" | awk -v plain="$plain" '
        BEGIN {
            '"$ROW_TABLE_HEADER"'
            n_plain = split(plain, pairs, " ")
            for (i = 1; i <= n_plain; i++) { split(pairs[i], kv, "="); plain_cpu[kv[1]] = kv[2] }
        }
        '"$ROW_TABLE_LINE"'
        END {
            print ""
            for (i = 1; i <= n; i++) {
                p = order[i]
                if (cpu_per["redis-benchmark-cluster", p] > 0 && sc["redis-benchmark-cluster", p] > 0)
                    printf "pipeline %-3s kvbench/redis-benchmark in cluster mode: CPU per request %.2f, syscalls per request %.2f vs %.2f\n",
                        p, cpu_per["kvbench-cluster", p] / cpu_per["redis-benchmark-cluster", p],
                        sc["kvbench-cluster", p], sc["redis-benchmark-cluster", p]
                if (cpu_per["memtier-cluster", p] > 0)
                    printf "pipeline %-3s kvbench/memtier_benchmark in cluster mode: CPU per request %.2f, syscalls per request %.2f vs %.2f\n",
                        p, cpu_per["kvbench-cluster", p] / cpu_per["memtier-cluster", p],
                        sc["kvbench-cluster", p], sc["memtier-cluster", p]
                if (plain_cpu[p] > 0)
                    printf "pipeline %-3s kvbench cluster/plain CPU per request: %.2f (%.3f vs %.3f CPU s per 1M requests)\n",
                        p, cpu_per["kvbench-cluster", p] / plain_cpu[p], cpu_per["kvbench-cluster", p], plain_cpu[p]
            }
        }'
    printf '%s\n' "${splits[@]}" | awk -v total="$KV_REQUESTS" '{
        printf "pipeline %-3s kvbench SET+GET per master (INFO commandstats): %d / %d / %d, %d in all (%d sent)\n",
            $1, $2, $3, $4, $2 + $3 + $4, total }'
    steal_line "the cluster section"
}
