#!/usr/bin/env bash
# local-job.sh: run an N-shard kvbench job on this machine the way the Kubernetes
# Indexed Job runs it (deploy/kubernetes/job.yaml), then collect and merge it the way
# deploy/kubernetes/collect.sh does on a cluster: one merged ALL STATS table on stdout.
#
#   deploy/local-job.sh N [KVBENCH_MERGE_FLAGS...] -- KVBENCH_FLAGS...
#   deploy/local-job.sh 3 --json-out-file=all.json -- -s 127.0.0.1 -p 6379 --test-time=10
#
# Each shard I is deploy/kvbench-shard with JOB_COMPLETION_INDEX=I and
# --shard=I/N --start-at=T (one T for all, a few seconds ahead), its stdout and stderr
# captured as a pod's log. collect.sh then reads those logs through a stand-in for
# kubectl, so the result travels the same path as on a cluster.
#
# Environment: KVBENCH (default: kvbench on PATH, else this checkout's
# target/release/kvbench), LOCAL_JOB_START_IN (seconds until the shared start, default 3),
# LOCAL_JOB_DIR (keep the pod logs and shard results there; default a temporary directory).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
usage() {
    echo "usage: $0 N [kvbench merge flags...] -- kvbench flags..." >&2
    exit 1
}
(($# >= 2)) || usage
n=$1
shift
[[ $n =~ ^[1-9][0-9]*$ ]] || usage
merge_args=()
while (($# > 0)) && [[ $1 != -- ]]; do
    merge_args+=("$1")
    shift
done
(($# > 0)) || usage
shift # the --

if [[ -z ${KVBENCH:-} ]]; then
    if command -v kvbench >/dev/null 2>&1; then
        KVBENCH=$(command -v kvbench)
    else
        KVBENCH=$here/../target/release/kvbench
    fi
fi
[[ -x $KVBENCH ]] || {
    echo "local-job: $KVBENCH is not an executable: build with 'make build' or set KVBENCH" >&2
    exit 1
}
export KVBENCH

if [[ -n ${LOCAL_JOB_DIR:-} ]]; then
    work=$LOCAL_JOB_DIR
    mkdir -p "$work"
else
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
fi
job=kvbench-local

# The shared start: every shard connects first, then all start sending at this time. To
# the millisecond: whole seconds from now would cut up to a second off the lead, and a
# shard that starts after the time is refused.
start_ms=$(($(date +%s%3N) + ${LOCAL_JOB_START_IN:-3} * 1000))
start=$((start_ms / 1000)).$(printf '%03d' $((start_ms % 1000)))
pids=()
for ((i = 0; i < n; i++)); do
    JOB_COMPLETION_INDEX=$i "$here/kvbench-shard" "--shard=$i/$n" "--start-at=$start" "$@" \
        >"$work/pod-$i.log" 2>&1 </dev/null &
    pids+=($!)
done
failed=0
for ((i = 0; i < n; i++)); do
    if ! wait "${pids[$i]}"; then
        echo "local-job: shard $i/$n failed; the end of its log:" >&2
        tail -n 5 "$work/pod-$i.log" | tr '\r' '\n' | tail -n 5 >&2
        failed=$((failed + 1))
    fi
done

# kubectl as collect.sh uses it, answered from the pods' logs: the Job's status
# (succeeded/failed) and `logs -l job-name=JOB`.
cat >"$work/kubectl" <<STAND_IN
#!/usr/bin/env bash
case \$1 in
    get) echo "$((n - failed))/$failed" ;;
    logs) cat "$work"/pod-*.log ;;
    *) echo "local-job kubectl stand-in: \$1 is not served" >&2; exit 1 ;;
esac
STAND_IN
chmod +x "$work/kubectl"
status=0
KUBECTL=$work/kubectl COLLECT_DIR=$work/results \
    "$here/kubernetes/collect.sh" "$job" "$n" "${merge_args[@]}" || status=$?
exit "$status"
