#!/usr/bin/env bash
# collect.sh: gather the results of a kvbench Indexed Job from its pods' logs and merge
# them, with no shared storage.
#
#   deploy/kubernetes/collect.sh JOB N [KVBENCH_MERGE_FLAGS...]
#   deploy/kubernetes/collect.sh kvbench 3 --json-out-file=all.json --hdr-file-prefix=all
#
# Waits until the Job has N succeeded pods (or stops at the first failed one), reads
# every pod's log (`kubectl logs -l job-name=JOB`), cuts out each shard's JSON between
# kvbench-shard's marker lines into DIR/shard-I.json, checks every shard 0..N-1 is
# there, and runs `kvbench merge` on them: the merged ALL STATS table on stdout.
#
# Environment: KUBECTL (default kubectl; kubectl flags such as a namespace can go in it:
# KUBECTL="kubectl -n bench"), KVBENCH (default kvbench), COLLECT_DIR (where the shard
# files stay, default ./JOB-results), COLLECT_TIMEOUT (seconds to wait, default 3600).
set -euo pipefail

if (($# < 2)) || ! [[ $2 =~ ^[1-9][0-9]*$ ]]; then
    echo "usage: $0 JOB N [kvbench merge flags...]" >&2
    exit 1
fi
job=$1
n=$2
shift 2
read -r -a kubectl <<<"${KUBECTL:-kubectl}"
kvbench=${KVBENCH:-kvbench}
dir=${COLLECT_DIR:-$job-results}
timeout=${COLLECT_TIMEOUT:-3600}

deadline=$((SECONDS + timeout))
while :; do
    status=$("${kubectl[@]}" get "job/$job" -o 'jsonpath={.status.succeeded}/{.status.failed}')
    succeeded=${status%/*}
    failed=${status#*/}
    if ((${failed:-0} > 0)); then
        echo "collect: job/$job has ${failed} failed shard(s); see: kubectl logs -l job-name=$job" >&2
        exit 1
    fi
    ((${succeeded:-0} >= n)) && break
    if ((SECONDS >= deadline)); then
        echo "collect: job/$job has ${succeeded:-0} of $n shards done after ${timeout} s" >&2
        exit 1
    fi
    sleep 5
done

mkdir -p "$dir"
rm -f "$dir"/shard-*.json
"${kubectl[@]}" logs -l "job-name=$job" --tail=-1 --max-log-requests="$n" >"$dir/pods.log"
# Each shard's JSON, between its markers, into its own file.
awk -v dir="$dir" '
    /^-----BEGIN KVBENCH RESULT [0-9]+\/[0-9]+-----$/ {
        shard = $4
        sub(/\/.*/, "", shard)
        file = dir "/shard-" shard ".json"
        printf "" > file
        inside = 1
        next
    }
    /^-----END KVBENCH RESULT-----$/ { if (inside) close(file); inside = 0; next }
    inside { print >> file }
' "$dir/pods.log"

files=()
for ((i = 0; i < n; i++)); do
    if [[ ! -s $dir/shard-$i.json ]]; then
        echo "collect: no result for shard $i/$n in the logs of job/$job (see $dir/pods.log)" >&2
        exit 1
    fi
    files+=("$dir/shard-$i.json")
done
echo "collect: $n shard results in $dir; merging" >&2
exec "$kvbench" merge "$@" "${files[@]}"
