#!/usr/bin/env bash
# make stops (not in CI, about 10 minutes): the whole test suite while every kvbench the
# tests start is stopped (SIGSTOP) for STOPS_MS milliseconds every 1-3 s and then
# continued, the way a stalled VM or a loaded CI machine holds a process off the CPU.
# A test whose bounds only hold on a quiet machine fails here; so does a wait that a
# stop makes endless (this run found a cluster discovery that never ended and a latency
# window that miscounted). Only the kvbench processes of this run's own session are
# stopped. Output in stops-out/test.log.
#
# Environment knobs: STOPS_MS (default 350: the longest stop CI has been seen to make).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
STOPS_MS=${STOPS_MS:-350}
[[ $STOPS_MS =~ ^[0-9]+$ ]] && ((STOPS_MS > 0 && STOPS_MS < 5000)) ||
    { echo "stops: STOPS_MS must be a number of milliseconds from 1 to 4999, got '$STOPS_MS'" >&2; exit 1; }
mkdir -p stops-out
cargo build --release --tests

# The suite in a session of its own, so that the stops reach its kvbench processes and
# no one else's. KVBENCH_STOPS tells the tests that hold a kvbench stopped themselves
# (tests/lifecycle.rs, across a --test-time deadline) that a continue may come early.
export KVBENCH_STOPS=1
setsid cargo test --release --no-fail-fast >stops-out/test.log 2>&1 &
suite=$!
stopper=
finish() {
    # The stopper ends with the suite (it ignores TERM so that a stop always gets its
    # continue); nothing may stay stopped once it is gone.
    if [[ -n $stopper ]]; then
        wait "$stopper" 2>/dev/null || true
    fi
    pkill -CONT -s "$suite" -x kvbench 2>/dev/null || true
}
trap finish EXIT
trap 'kill -TERM -- "-$suite" 2>/dev/null; exit 130' INT TERM

pause=$(awk -v ms="$STOPS_MS" 'BEGIN { printf "%.3f", ms / 1000 }')
(
    # A stop is always followed by its continue: SIGTERM waits for the sleep in between.
    trap '' TERM
    while kill -0 "$suite" 2>/dev/null; do
        if pkill -STOP -s "$suite" -x kvbench 2>/dev/null; then
            sleep "$pause"
            pkill -CONT -s "$suite" -x kvbench 2>/dev/null || true
        fi
        sleep "$((1 + RANDOM % 3)).$((RANDOM % 10))"
    done
) &
stopper=$!

status=0
wait "$suite" || status=$?
grep '^test result' stops-out/test.log | awk '{ p += $4; f += $6 } END { printf "stops: %d passed, %d failed with kvbench stopped for '"$STOPS_MS"' ms every 1-3 s\n", p, f }'
grep -E '^test .* FAILED$' stops-out/test.log || true
exit "$status"
