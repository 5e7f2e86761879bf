#!/usr/bin/env bash
# Shared by demo.sh and bench.sh: throwaway servers on free ports of 127.0.0.1.
#
# The caller sets SCRIPT_NAME (for messages) and owns cleanup: the functions set
# redis_dir, redis_pid, memcached_pid (to stop by PID) and REDIS_PORT, MEMCACHED_PORT.
# Each server runs in its own session, so a Ctrl-C at the terminal reaches kvbench but
# not the server (redis-server shuts down on SIGINT).

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

lib_fail() {
    echo "${SCRIPT_NAME:-kvbench}: error: $*" >&2
    exit 1
}

# Waits up to 10 s for the redis-server with pid $1 to answer PING (redis-cli run with the
# arguments after the pid: host, port, TLS options); fails at once if the process exits.
await_pong() {
    local pid=$1 deadline=$((SECONDS + 10))
    shift
    while ((SECONDS < deadline)) && kill -0 "$pid" 2>/dev/null; do
        [[ $(redis-cli "$@" PING 2>/dev/null) == PONG ]] && return 0
        sleep 0.1
    done
    return 1
}

# Start redis-server on a free port; retries on a new port if another process takes the
# one picked before redis binds it.
start_redis() {
    local attempt port
    redis_dir=$(mktemp -d "${TMPDIR:-/tmp}/kvbench-${SCRIPT_NAME:-run}-redis.XXXXXX")
    for attempt in 1 2 3 4 5; do
        port=$(free_port)
        setsid redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
            --dir "$redis_dir" --logfile "$redis_dir/redis.log" </dev/null &
        redis_pid=$!
        if await_pong "$redis_pid" -h 127.0.0.1 -p "$port"; then
            REDIS_PORT=$port
            return 0
        fi
        kill "$redis_pid" 2>/dev/null || true
        wait "$redis_pid" 2>/dev/null || true
        redis_pid=
        echo "${SCRIPT_NAME:-kvbench}: redis-server did not come up on port $port (attempt $attempt):" >&2
        tail -n 5 "$redis_dir/redis.log" >&2 2>/dev/null || true
    done
    lib_fail "could not start redis-server; see the log lines above"
}

# Start memcached on a free port with $1 worker threads (as root it needs -u).
start_memcached() {
    local threads=${1:-2} attempt port deadline user_args=()
    [[ $(id -u) -eq 0 ]] && user_args=(-u root)
    for attempt in 1 2 3 4 5; do
        port=$(free_port)
        setsid memcached "${user_args[@]}" -p "$port" -l 127.0.0.1 -U 0 -m 256 -t "$threads" </dev/null &
        memcached_pid=$!
        deadline=$((SECONDS + 10))
        while ((SECONDS < deadline)) && kill -0 "$memcached_pid" 2>/dev/null; do
            if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
                MEMCACHED_PORT=$port
                return 0
            fi
            sleep 0.1
        done
        kill "$memcached_pid" 2>/dev/null || true
        wait "$memcached_pid" 2>/dev/null || true
        memcached_pid=
        echo "${SCRIPT_NAME:-kvbench}: memcached did not come up on port $port (attempt $attempt)" >&2
    done
    lib_fail "could not start memcached"
}
