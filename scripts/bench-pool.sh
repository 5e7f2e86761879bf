# Sourced by scripts/bench.sh: the pool section. kvbench with a pool of two memcached
# servers (--servers, libmemcached's ketama placement, the default) beside kvbench against
# one of them alone, with bench.sh's load over the memcache text protocol: what placing
# every key in a pool costs per request (CPU seconds per million requests, syscalls per
# request). No tool kvbench replaces keeps a pool (memtier_benchmark and redis-benchmark
# talk to one server), so the yardstick is kvbench on one server. Each pool run's
# requests are checked against what the members counted (`stats`: cmd_get + cmd_set),
# member by member: kvbench's PER SERVER rows (JSON "Servers") must match the servers.
#
# Uses lib.sh's start_memcached and bench.sh's memcached_command, timed_run, strace_run, steal_mark,
# steal_line, die and its load variables; it adds each member's PID to memcached_pids,
# which bench.sh's cleanup stops, and leaves MEMCACHED_PORT naming the main memcached.

POOL_PORTS=()
POOL_PIDS=()

# One member: a memcached with one worker thread (as the main section's). start_memcached
# sets memcached_pid and MEMCACHED_PORT, which name the main section's memcached: that
# one moves to memcached_pids first (so cleanup stops it even if this start fails) and its
# port is put back.
start_pool_member() {
    local main_port=${MEMCACHED_PORT:-}
    if [[ -n $memcached_pid ]]; then
        memcached_pids+=("$memcached_pid")
        memcached_pid=
    fi
    start_memcached 1
    memcached_pids+=("$memcached_pid")
    memcached_pid=
    POOL_PIDS+=("${memcached_pids[-1]}")
    POOL_PORTS+=("$MEMCACHED_PORT")
    MEMCACHED_PORT=$main_port
}

# Stops the members once the section is done (so the sections after it run beside the
# main servers only) and takes their PIDs off cleanup's list.
stop_pool() {
    local pid keep=()
    for pid in "${POOL_PIDS[@]}"; do
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    for pid in "${memcached_pids[@]}"; do
        [[ " ${POOL_PIDS[*]} " == *" $pid "* ]] || keep+=("$pid")
    done
    memcached_pids=("${keep[@]}")
    POOL_PIDS=()
}

# Empties every member and zeroes its counters (bench.sh's reset_server, pool section).
reset_pool() {
    local port
    for port in "${POOL_PORTS[@]}"; do
        [[ $(memcached_command "$port" flush_all) == OK ]] || die "flush_all failed on pool member $port"
        [[ $(memcached_command "$port" "stats reset") == RESET ]] || die "stats reset failed on pool member $port"
    done
}

# GETs and SETs each member has served since its last reset, space-separated.
pool_calls() {
    local port
    for port in "${POOL_PORTS[@]}"; do
        memcached_command "$port" stats |
            awk '$2 == "cmd_get" || $2 == "cmd_set" { n += $3 } END { printf "%d ", n }'
    done
}

# The Count of each member's row in a kvbench JSON file, in POOL_PORTS order.
pool_rows() { # json
    local port
    for port in "${POOL_PORTS[@]}"; do
        python3 -c 'import json, sys
runs = json.load(open(sys.argv[1]))
servers = runs["ALL STATS"]["Servers"]
print(servers["127.0.0.1:" + sys.argv[2]]["Count"], end=" ")' "$1" "$port" ||
            die "no PER SERVER row for 127.0.0.1:$port in $1"
    done
}

pool_section() {
    local p name pool_rows_out=() shares=() servers_arg calls rows_seen json
    echo "==> starting two throwaway memcached servers for the pool"
    start_pool_member
    start_pool_member
    servers_arg="127.0.0.1:${POOL_PORTS[0]},127.0.0.1:${POOL_PORTS[1]}"
    echo "bench: pool members on 127.0.0.1:${POOL_PORTS[*]} (pids ${POOL_PIDS[*]})"
    RESET_POOL=1
    steal_mark
    for p in $PIPELINES; do
        local one=("$KVBENCH" -P memcache_text -s 127.0.0.1 -p "${POOL_PORTS[0]}" "${kv_base[@]}" "--pipeline=$p")
        local pool=("$KVBENCH" -P memcache_text "--servers=$servers_arg" "${kv_base[@]}" "--pipeline=$p")

        name=kvbench-one-memcached-p$p
        echo "==> kvbench, one memcached, pipeline $p: $KV_REQUESTS requests timed, $((KV_REQUESTS / STRACE_DIV)) under strace"
        timed_run "$name" "${one[@]}" -n "$REQS_PER_CLIENT"
        local user=$CPU_USER sys=$CPU_SYS wall=$WALL
        strace_run "$name" "${one[@]}" -n "$((REQS_PER_CLIENT / STRACE_DIV))"
        pool_rows_out+=("one-server $p $KV_REQUESTS $user $sys $wall $SYSCALLS $((KV_REQUESTS / STRACE_DIV))")

        name=kvbench-pool-p$p
        json=$OUT_DIR/$name.json
        echo "==> kvbench, a pool of two memcached, pipeline $p: $KV_REQUESTS requests timed, $((KV_REQUESTS / STRACE_DIV)) under strace"
        timed_run "$name" "${pool[@]}" -n "$REQS_PER_CLIENT" "--json-out-file=$json"
        user=$CPU_USER sys=$CPU_SYS wall=$WALL
        calls=$(pool_calls)
        rows_seen=$(pool_rows "$json")
        [[ $calls == "$rows_seen" ]] ||
            die "pool, pipeline $p: the members counted $calls requests, kvbench's PER SERVER rows $rows_seen"
        shares+=("$p $calls")
        strace_run "$name" "${pool[@]}" -n "$((REQS_PER_CLIENT / STRACE_DIV))"
        pool_rows_out+=("pool $p $KV_REQUESTS $user $sys $wall $SYSCALLS $((KV_REQUESTS / STRACE_DIV))")
    done
    RESET_POOL=
    echo
    echo "Pools: two memcached servers (--servers, ketama), memcache text, 1 thread, $CLIENTS clients (a connection to every member per client in the pool), ${DATA_SIZE} B values, $KEYS keys"
    printf '%s\n' "${pool_rows_out[@]}" | awk "BEGIN { $ROW_TABLE_HEADER } $ROW_TABLE_LINE"'
        END {
            print ""
            for (i = 1; i <= n; i++) {
                p = order[i]
                if (cpu_per["one-server", p] > 0)
                    printf "pipeline %-3s pool of two / one server: CPU per request %.2f, syscalls per request %.2f vs %.2f\n",
                        p, cpu_per["pool", p] / cpu_per["one-server", p], sc["pool", p], sc["one-server", p]
            }
        }'
    local split
    for split in "${shares[@]}"; do
        # "pipeline first second": each member's GETs and SETs, as it counted them.
        awk -v line="$split" 'BEGIN {
            split(line, f, " "); total = f[2] + f[3]
            printf "pipeline %-3s the members served %d and %d requests (%.1f %% / %.1f %%), as kvbench'"'"'s PER SERVER rows counted them\n",
                f[1], f[2], f[3], 100 * f[2] / total, 100 * f[3] / total }'
    done
    steal_line "the pool section"
    stop_pool
}
