# Sourced by bench.sh (not run alone): kvbench against the loopback floor, memory per
# connection at 10 000 connections, and the latency kvbench adds at one connection.
#
# The floor (bench/floor.c, built here with gcc) does nothing but write requests and read
# replies on one epoll thread: no timing, no stats. Its headline mode refills a pipeline
# only when the whole batch is answered (as redis-benchmark does); pipelined rows also run
# its per-read mode, which refills after every read as memtier_benchmark and kvbench's
# memtier front end do: the like-for-like floor when a server answers a batch in pieces
# (one-thread memcached flushes at each SET). A `kvbench redis-benchmark -P` row (whole
# batches, GETs of keys never set) is set against the headline floor's Redis row of the
# same pipeline. kvbench runs the same load (1 thread,
# 50 connections, 1 SET in 11, 32 B values, keys that almost never hit: 10M keys, and
# about 91 000 of them set per run) against the same server. The machine is shared with
# other work, so CPU seconds are noisy: each side's figure is the best of FLOOR_RUNS runs
# (the least disturbed one), the sides taking turns, and the ratio is kvbench's best over
# the floor's best.
# Uses bench.sh's die, memcached_command, steal_mark, steal_line, reset_server, KVBENCH, OUT_DIR, SCALE,
# PIPELINES, REDIS_PORT and MEMCACHED_PORT.

FLOOR=$OUT_DIR/floor
FLOOR_RUNS=${BENCH_FLOOR_RUNS:-2}
FLOOR_CLIENTS=50
# Pipelined runs are five times longer: a pipelined request costs a tenth of the CPU.
floor_per_client() { # pipeline
    if (($1 > 1)); then echo $((100000 / SCALE)); else echo $((20000 / SCALE)); fi
}

# memcached's counterpart of reset_server: an empty cache before each run.
flush_memcached() {
    [[ $(memcached_command "$MEMCACHED_PORT" flush_all) == OK ]] || die "memcached flush_all failed"
}

# Runs cmd once (run number RUN); sets CPU to its CPU seconds (user+sys, from the child's
# rusage, to the microsecond: /usr/bin/time rounds to 10 ms, too coarse here), and adds
# its user and system seconds to RUN_USER and RUN_SYS.
run_cpu() { # name server cmd...
    local name=$1 server=$2 times user sys
    shift 2
    if [[ $server == redis ]]; then reset_server; else flush_memcached; fi
    if ! times=$(python3 -c '
import resource, subprocess, sys
out, err = open(sys.argv[1], "wb"), open(sys.argv[2], "wb")
code = subprocess.call(sys.argv[3:], stdout=out, stderr=err)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(r.ru_utime + r.ru_stime, r.ru_utime, r.ru_stime)
sys.exit(code)' "$OUT_DIR/$name.$RUN.out" "$OUT_DIR/$name.$RUN.err" "$@"); then
        tail -n 20 "$OUT_DIR/$name.$RUN.out" "$OUT_DIR/$name.$RUN.err" >&2 || true
        die "$name failed: $*"
    fi
    read -r CPU user sys <<<"$times"
    echo "$CPU" >"$OUT_DIR/$name.$RUN.cpu"
    RUN_CPUS[$name]="${RUN_CPUS[$name]:-} $CPU"
    RUN_USER[$name]=$(awk -v a="${RUN_USER[$name]:-0}" -v b="$user" 'BEGIN { print a + b }')
    RUN_SYS[$name]=$(awk -v a="${RUN_SYS[$name]:-0}" -v b="$sys" 'BEGIN { print a + b }')
}

# At pipeline 1 a request is two system calls and little else, so the CPU is mostly the
# kernel's and the run-to-run spread (often 7 %, at times 25 %) is larger than the
# client's own share; at pipeline 16 the kernel's share is smaller but still most of it.
# The user and system time apart, averaged over a side's runs, show which of the two a
# ratio's distance from 1 comes from (the client's own work is in the user time).
declare -A RUN_USER=() RUN_SYS=()
split_line() { # protocol pipeline requests
    local floor=floor-$1-p$2 kv=kvbench-floorload-$1-p$2
    awk -v fu="${RUN_USER[$floor]}" -v fs="${RUN_SYS[$floor]}" -v ku="${RUN_USER[$kv]}" -v ks="${RUN_SYS[$kv]}" \
        -v runs="$FLOOR_RUNS" -v n="$3" -v proto="$1" -v p="$2" 'BEGIN {
        per = 1e6 / (runs * n)
        printf "pipeline %-3d %-16s us per request, user + system, mean of %d runs: floor %.3f + %.3f, kvbench %.3f + %.3f (user %+.3f, system %+.3f)\n",
            p, proto, runs, fu * per, fs * per, ku * per, ks * per, (ku - fu) * per, (ks - fs) * per }'
}

# How far apart each side's runs of the same load were in this section: the gap between
# its most and least CPU, over the least. The ratios are best against best; a gap near
# the 15 % line says one pair of runs cannot decide it.
declare -A RUN_CPUS=()
spread_line() {
    local name
    for name in "${!RUN_CPUS[@]}"; do
        # shellcheck disable=SC2086 # the figures are one space-separated list
        set -- ${RUN_CPUS[$name]}
        (($# >= 2)) || continue
        printf '%s %s\n' "$name" "$*"
    done | awk '{ lo = $2; hi = $2; for (i = 3; i <= NF; i++) { if ($i < lo) lo = $i; if ($i > hi) hi = $i }
                  if (lo > 0) printf "%.1f %s\n", (hi - lo) / lo * 100, $1 }' | sort -n | awk '
        { gap[NR] = $1; name[NR] = $2 }
        END {
            if (NR == 0) exit
            printf "spread between a side'"'"'s runs of the same load: median %.0f %%, largest %.0f %% (%s), over %d loads\n",
                gap[int((NR + 1) / 2)], gap[NR], name[NR], NR
        }'
}

# The lesser of two CPU figures, the first possibly empty.
least() { awk -v a="$1" -v b="$2" 'BEGIN { print (a == "" || b + 0 < a + 0) ? b : a }'; }

echo
steal_mark
echo "==> the loopback floor: building bench/floor.c"
gcc -O2 -Wall -o "$FLOOR" bench/floor.c || die "gcc could not build bench/floor.c"
floor_rows=() # "protocol pipeline requests floor_cpu kvbench_cpu per_read_floor_cpu|-"
for proto in redis memcache_text memcache_binary; do
    if [[ $proto == redis ]]; then server=redis port=$REDIS_PORT; else server=memcached port=$MEMCACHED_PORT; fi
    for p in $PIPELINES; do
        per_client=$(floor_per_client "$p")
        requests=$((per_client * FLOOR_CLIENTS))
        echo "==> floor and kvbench, $proto, pipeline $p: $requests requests, best of $FLOOR_RUNS each, in turn"
        # The sides take turns, so a slow spell of the shared machine falls on both.
        # At pipeline 1 both refill shapes are the same load: no per-read floor.
        floor_cpu= per_read_cpu=- kv_cpu= rb_cpu= batch_cpu=
        if ((p > 1)); then per_read_cpu=; fi
        for ((RUN = 1; RUN <= FLOOR_RUNS; RUN++)); do
            run_cpu "floor-$proto-p$p" "$server" "$FLOOR" "$port" "$FLOOR_CLIENTS" "$per_client" "$p" "$proto" batch
            floor_cpu=$(least "$floor_cpu" "$CPU")
            if ((p > 1)); then
                run_cpu "floor-per-read-$proto-p$p" "$server" "$FLOOR" "$port" "$FLOOR_CLIENTS" "$per_client" "$p" \
                    "$proto" per-read
                per_read_cpu=$(least "$per_read_cpu" "$CPU")
            fi
            run_cpu "kvbench-floorload-$proto-p$p" "$server" "$KVBENCH" -P "$proto" -s 127.0.0.1 -p "$port" \
                -t 1 -c "$FLOOR_CLIENTS" -n "$per_client" --ratio=1:10 --key-maximum=10000000 \
                -d 32 "--pipeline=$p" --hide-histogram
            kv_cpu=$(least "$kv_cpu" "$CPU")
            if [[ $proto != redis ]] && ((p > 1)); then
                # The floor's own shape: --refill=batch sends the next p requests once the
                # whole batch is answered, where memtier's shape refills per reply.
                run_cpu "kvbench-batch-floorload-$proto-p$p" "$server" "$KVBENCH" -P "$proto" -s 127.0.0.1 \
                    -p "$port" -t 1 -c "$FLOOR_CLIENTS" -n "$per_client" --ratio=1:10 --key-maximum=10000000 \
                    -d 32 "--pipeline=$p" --refill=batch --hide-histogram
                batch_cpu=$(least "$batch_cpu" "$CPU")
            fi
            if [[ $proto == redis ]] && ((p > 1)); then
                # redis-benchmark's shape: whole batches of p, one event loop, GETs that miss
                # (the floor's load is 1 SET in 11; both replies are 5 bytes).
                run_cpu "kvbench-rb-floorload-p$p" redis "$KVBENCH" redis-benchmark -h 127.0.0.1 -p "$port" \
                    -c "$FLOOR_CLIENTS" -n "$requests" -P "$p" -t get -r 10000000 -q
                rb_cpu=$(least "$rb_cpu" "$CPU")
            fi
        done
        floor_rows+=("$proto $p $requests $floor_cpu $kv_cpu $per_read_cpu")
        if [[ -n $batch_cpu ]]; then
            floor_rows+=("$proto/batch $p $requests $floor_cpu $batch_cpu -")
        fi
        if [[ -n $rb_cpu ]]; then
            floor_rows+=("redis-benchmark $p $requests $floor_cpu $rb_cpu -")
        fi
    done
done

# Memory per connection: peak RSS at 10 000 connections (-t 2 -c 5000, a few requests
# each) against one at 2 connections, the same otherwise. kvbench raises its own soft
# open-file limit up to the hard one; redis-server is allowed the clients.
MEM_THREADS=2
MEM_CLIENTS=5000
MEM_CONNS=$((MEM_THREADS * MEM_CLIENTS))
echo "==> memory: kvbench at $MEM_CONNS connections and at $MEM_THREADS (ulimit -n $(ulimit -n), hard $(ulimit -Hn))"
mem_skip=
hard=$(ulimit -Hn)
if [[ $hard != unlimited ]] && ((hard < MEM_CONNS + 200)); then
    mem_skip="the hard open-file limit is $hard, below the $((MEM_CONNS + 200)) needed"
elif [[ $(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" CONFIG SET maxclients $((MEM_CONNS + 100)) 2>&1) != OK ]]; then
    mem_skip="redis-server cannot take $MEM_CONNS clients (CONFIG SET maxclients refused; raise ulimit -n)"
fi
peak_rss() { # clients -> PEAK_KB
    reset_server
    local tfile=$OUT_DIR/rss-c$1.time
    if ! /usr/bin/time -f '%M' -o "$tfile" "$KVBENCH" -s 127.0.0.1 -p "$REDIS_PORT" -t "$MEM_THREADS" -c "$1" \
        -n 20 --ratio=1:10 -d 32 --hide-histogram >"$OUT_DIR/rss-c$1.out" 2>"$OUT_DIR/rss-c$1.err"; then
        tail -n 20 "$OUT_DIR/rss-c$1.err" >&2 || true
        die "kvbench with $1 clients per thread failed"
    fi
    PEAK_KB=$(tail -n 1 "$tfile")
    [[ $PEAK_KB =~ ^[0-9]+$ ]] || die "no peak RSS in $tfile"
}
if [[ -z $mem_skip ]]; then
    peak_rss "$MEM_CLIENTS"
    rss_many=$PEAK_KB
    peak_rss 1
    rss_one=$PEAK_KB
fi

# A memtier-style JSON result's p50 (ms) and requests per second, from its Totals row.
totals_p50_rps() { # json -> "p50 rps"
    python3 -c 'import json, sys
t = json.load(open(sys.argv[1]))["ALL STATS"]["Totals"]
print(t["Percentile Latencies"]["p50.00"], round(t["Ops/sec"]))' "$1"
}

# The latency kvbench adds: p50 at one connection, pipeline 1, beside another client's on
# the same server (memtier_benchmark when installed, else redis-benchmark). kvbench and
# memtier_benchmark take turns, LAT_RUNS runs each, and each side's figure is its median
# p50: one run each moved memtier's p50 by a whole histogram step (0.063 against 0.071
# ms) from one run to the next, and now and then the VM runs client and server on one
# CPU for a whole run, which takes the wake-up out of the round trip (0.014 ms): the
# lowest run would pick that.
LAT_REQUESTS=$((100000 / SCALE))
LAT_RUNS=${BENCH_LATENCY_RUNS:-3}
((LAT_RUNS >= 1)) || die "BENCH_LATENCY_RUNS must be at least 1"
# The median of the numbers given.
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print ((NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
kv_p50_runs= other_p50_runs=
for ((RUN = 1; RUN <= LAT_RUNS; RUN++)); do
    echo "==> latency at one connection: kvbench, $LAT_REQUESTS requests (run $RUN of $LAT_RUNS)"
    reset_server
    "$KVBENCH" -s 127.0.0.1 -p "$REDIS_PORT" -t 1 -c 1 -n "$LAT_REQUESTS" --ratio=1:1 --key-maximum=100000 \
        -d 32 --hide-histogram "--json-out-file=$OUT_DIR/latency-kvbench.$RUN.json" \
        >"$OUT_DIR/latency-kvbench.$RUN.out" 2>&1 || die "kvbench at one connection failed"
    read -r p50 _ < <(totals_p50_rps "$OUT_DIR/latency-kvbench.$RUN.json") ||
        die "no p50 in latency-kvbench.$RUN.json"
    kv_p50_runs+=" $p50"
    if command -v memtier_benchmark >/dev/null 2>&1; then
        echo "==> latency at one connection: memtier_benchmark, $LAT_REQUESTS requests (run $RUN of $LAT_RUNS)"
        reset_server
        memtier_benchmark -s 127.0.0.1 -p "$REDIS_PORT" -t 1 -c 1 -n "$LAT_REQUESTS" --ratio=1:1 \
            --key-maximum=100000 -d 32 --hide-histogram "--json-out-file=$OUT_DIR/latency-memtier.$RUN.json" \
            >"$OUT_DIR/latency-memtier.$RUN.out" 2>&1 || die "memtier_benchmark at one connection failed"
        read -r p50 _ < <(totals_p50_rps "$OUT_DIR/latency-memtier.$RUN.json") ||
            die "no p50 in latency-memtier.$RUN.json"
        other_p50_runs+=" $p50"
    fi
done
# shellcheck disable=SC2086 # the runs' figures, one word each
kv_p50=$(median $kv_p50_runs)
# The same with --busy-poll: how much of the figure is the client's own wake-up from idle.
echo "==> latency at one connection: kvbench --busy-poll=100, $LAT_REQUESTS requests"
reset_server
"$KVBENCH" -s 127.0.0.1 -p "$REDIS_PORT" -t 1 -c 1 -n "$LAT_REQUESTS" --ratio=1:1 --key-maximum=100000 \
    -d 32 --hide-histogram --busy-poll=100 "--json-out-file=$OUT_DIR/latency-kvbench-busy.json" \
    >"$OUT_DIR/latency-kvbench-busy.out" 2>&1 || die "kvbench --busy-poll at one connection failed"
read -r kv_busy_p50 _ < <(totals_p50_rps "$OUT_DIR/latency-kvbench-busy.json") || die "no p50 in latency-kvbench-busy.json"
if command -v memtier_benchmark >/dev/null 2>&1; then
    other="memtier_benchmark$other_p50_runs ->"
    # shellcheck disable=SC2086
    other_p50=$(median $other_p50_runs)
else
    other="redis-benchmark (memtier_benchmark is not installed; one run)"
    echo "==> latency at one connection: redis-benchmark, $LAT_REQUESTS SETs and GETs"
    reset_server
    redis-benchmark -h 127.0.0.1 -p "$REDIS_PORT" -c 1 -n $((LAT_REQUESTS / 2)) -t set,get -d 32 -r 100000 -q \
        >"$OUT_DIR/latency-redis-benchmark.out" 2>&1 || die "redis-benchmark at one connection failed"
    # "SET: 25000.00 requests per second, p50=0.031 msec": the lower of SET's and GET's
    # p50 would flatter it, so both are shown.
    other_p50=$(tr '\r' '\n' <"$OUT_DIR/latency-redis-benchmark.out" |
        sed -n 's/^\(SET\|GET\): .*p50=\([0-9.]*\) msec.*/\1 \2/p' | tr '\n' ' ')
    [[ -n $other_p50 ]] || die "no p50 in latency-redis-benchmark.out"
fi

# The same one connection with the client and the server on one CPU (taskset): each
# request is then a hand-over between two threads of one CPU, with no wake-up of an idle
# CPU in between. On a VM that wake-up (an inter-processor interrupt, the other vCPU
# leaving its halt) is most of a round trip and varies from run to run; without it the
# round trip is the two programs' own work and the loopback, so the figures show the
# latency each client adds. The server's CPU set is restored afterwards.
one_cpu_line="skipped: taskset (util-linux) is not installed"
if command -v taskset >/dev/null 2>&1; then
    # The first CPU this script may run on ("0-1", "0,2" or "3" -> 0, 0, 3).
    one_cpu=$(taskset -pc $$ | sed 's/.*: *//; s/[-,].*//')
    server_cpus=$(taskset -pc "$redis_pid" | sed 's/.*: *//')
    if taskset -pc "$one_cpu" "$redis_pid" >/dev/null 2>&1; then
        one_cpu_line= # filled in below
    else
        one_cpu_line="skipped: taskset could not pin redis-server to CPU $one_cpu here"
    fi
fi
if [[ -z $one_cpu_line ]]; then
    echo "==> latency at one connection on one CPU ($one_cpu): kvbench, $LAT_REQUESTS requests"
    reset_server
    taskset -c "$one_cpu" "$KVBENCH" -s 127.0.0.1 -p "$REDIS_PORT" -t 1 -c 1 -n "$LAT_REQUESTS" --ratio=1:1 \
        --key-maximum=100000 -d 32 --hide-histogram "--json-out-file=$OUT_DIR/latency-one-cpu-kvbench.json" \
        >"$OUT_DIR/latency-one-cpu-kvbench.out" 2>&1 || die "kvbench on one CPU failed"
    read -r one_kv_p50 one_kv_rps < <(totals_p50_rps "$OUT_DIR/latency-one-cpu-kvbench.json") ||
        die "no p50 in latency-one-cpu-kvbench.json"
    if command -v memtier_benchmark >/dev/null 2>&1; then
        echo "==> latency at one connection on one CPU ($one_cpu): memtier_benchmark, $LAT_REQUESTS requests"
        reset_server
        taskset -c "$one_cpu" memtier_benchmark -s 127.0.0.1 -p "$REDIS_PORT" -t 1 -c 1 -n "$LAT_REQUESTS" \
            --ratio=1:1 --key-maximum=100000 -d 32 --hide-histogram \
            "--json-out-file=$OUT_DIR/latency-one-cpu-memtier.json" >"$OUT_DIR/latency-one-cpu-memtier.out" 2>&1 ||
            die "memtier_benchmark on one CPU failed"
        read -r one_other_p50 one_other_rps < <(totals_p50_rps "$OUT_DIR/latency-one-cpu-memtier.json") ||
            die "no p50 in latency-one-cpu-memtier.json"
        one_other="memtier_benchmark p50 $one_other_p50 ms, $one_other_rps requests/s"
    else
        echo "==> latency at one connection on one CPU ($one_cpu): redis-benchmark, $LAT_REQUESTS SETs and GETs"
        reset_server
        taskset -c "$one_cpu" redis-benchmark -h 127.0.0.1 -p "$REDIS_PORT" -c 1 -n $((LAT_REQUESTS / 2)) -t set,get \
            -d 32 -r 100000 -q >"$OUT_DIR/latency-one-cpu-redis-benchmark.out" 2>&1 ||
            die "redis-benchmark on one CPU failed"
        # "GET: 81566.07 requests per second, p50=0.015 msec", a line per test.
        one_other=$(tr '\r' '\n' <"$OUT_DIR/latency-one-cpu-redis-benchmark.out" |
            sed -n 's/^\(SET\|GET\): \([0-9]*\)[0-9.]* requests per second, p50=\([0-9.]*\) msec.*/\1 p50 \3 ms, \2 requests\/s/p' |
            paste -sd ';' | sed 's/;/; /g')
        [[ -n $one_other ]] || die "no p50 in latency-one-cpu-redis-benchmark.out"
        one_other="redis-benchmark $one_other"
    fi
    taskset -pc "$server_cpus" "$redis_pid" >/dev/null || die "taskset could not restore redis-server's CPUs"
    one_cpu_line="kvbench p50 $one_kv_p50 ms, $one_kv_rps requests/s (1:1); $one_other"
fi

echo
echo "kvbench against the loopback floor (bench/floor.c): CPU s (user+sys) per 1M requests, best of $FLOOR_RUNS runs each, 1 thread, $FLOOR_CLIENTS connections, 1:10"
echo "(floor: whole-batch refill, the headline; per-read: the floor refilling after every read, like kvbench's memtier front end;"
echo " a /batch row is kvbench --refill=batch, the floor's whole-batch shape, against the same floor;"
echo " the redis-benchmark row is kvbench redis-benchmark -P, whole batches of GETs, against the Redis floor)"
printf '%s\n' "${floor_rows[@]}" | awk '
    BEGIN { printf "%-21s %8s %10s %14s %14s %14s %13s %16s\n", "protocol", "pipeline", "requests", "floor CPU s/1M",
                   "per-read s/1M", "kvbench s/1M", "kvbench/floor", "kvbench/per-read" }
    { f = $4 / $3 * 1e6; k = $5 / $3 * 1e6; r = ($6 == "-" ? -1 : $6 / $3 * 1e6)
      printf "%-21s %8s %10d %14.3f %14s %14.3f %13s %16s\n", $1, $2, $3, f, (r < 0 ? "-" : sprintf("%.3f", r)), k,
             (f > 0 ? sprintf("%.2f", k / f) : "n/a"), (r > 0 ? sprintf("%.2f", k / r) : "-") }'
for p in $PIPELINES; do
    for proto in redis memcache_text memcache_binary; do
        [[ -n ${RUN_USER[floor-$proto-p$p]:-} ]] || continue # that pipeline not run
        split_line "$proto" "$p" $(($(floor_per_client "$p") * FLOOR_CLIENTS))
    done
done
echo
if [[ -n $mem_skip ]]; then
    echo "memory: skipped: $mem_skip"
else
    awk -v many="$rss_many" -v one="$rss_one" -v conns="$MEM_CONNS" -v t="$MEM_THREADS" 'BEGIN {
    printf "memory: peak RSS %d KB at %d connections (-t %d -c %d), %d KB at %d: %.1f KB per connection (%.1f KB counting the whole process)\n",
        many, conns, t, conns / t, one, t, (many - one) / (conns - t), many / conns }'
fi
echo "latency at one connection, pipeline 1 (p50, ms, median of $LAT_RUNS in turn): kvbench$kv_p50_runs -> $kv_p50 (all requests, 1:1); $other $other_p50; kvbench --busy-poll=100 $kv_busy_p50"
echo "latency at one connection, client and server on one CPU: $one_cpu_line"
spread_line
steal_line "the floor, memory and latency section"
