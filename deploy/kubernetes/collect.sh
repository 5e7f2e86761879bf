#!/usr/bin/env bash
# collect.sh: gather the results of a kvbench Indexed Job from its pods' logs and merge
# them, with no shared storage.
#
#   deploy/kubernetes/collect.sh JOB N [KVBENCH_MERGE_FLAGS...]
#   deploy/kubernetes/collect.sh kvbench 3 --json-out-file=all.json --hdr-file-prefix=all
#
# Waits until every one of the Job's N shards has finished, succeeded or failed (the
# Job's backoffLimitPerIndex: 0 lets the others run on when one fails), reads every
# pod's log (`kubectl logs -l job-name=JOB`), cuts out each shard's JSON between
# kvbench-shard's marker lines into DIR/shard-I.json and runs `kvbench merge` on them: the
# merged ALL STATS table on stdout. A shard that failed or left no result is named, the
# others are merged all the same (merge notes the missing shards), and the status is 1.
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
    # The Failed condition too: a Job of the older shape (backoffLimit: 0) ends its other
    # shards when one fails, and they count neither as succeeded nor as failed.
    status=$("${kubectl[@]}" get "job/$job" \
        -o 'jsonpath={.status.succeeded}/{.status.failed}/{.status.conditions[?(@.type=="Failed")].status}')
    IFS=/ read -r succeeded failed job_failed <<<"$status"
    succeeded=${succeeded:-0} failed=${failed:-0}
    ((succeeded + failed >= n)) && break
    if [[ ${job_failed:-} == True ]]; then
        echo "collect: job/$job failed with $succeeded of $n shards done" >&2
        break
    fi
    if ((SECONDS >= deadline)); then
        echo "collect: job/$job has $succeeded of $n shards done after ${timeout} s" >&2
        exit 1
    fi
    sleep 5
done
if ((failed > 0)); then
    echo "collect: job/$job has $failed failed shard(s); see: kubectl logs -l job-name=$job" >&2
fi

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
missing=()
for ((i = 0; i < n; i++)); do
    if [[ -s $dir/shard-$i.json ]]; then
        files+=("$dir/shard-$i.json")
    else
        missing+=("$i/$n")
    fi
done
for shard in "${missing[@]}"; do
    echo "collect: no result for shard $shard in the logs of job/$job (see $dir/pods.log)" >&2
done
if ((${#files[@]} == 0)); then
    echo "collect: no shard of job/$job left a result; nothing to merge" >&2
    exit 1
fi
if ((${#missing[@]} == 0 && failed == 0)); then
    echo "collect: $n shard results in $dir; merging" >&2
    exec "$kvbench" merge "$@" "${files[@]}"
fi
# What the shards that finished measured is still worth having: merged, with the run
# marked as short of shards by the status.
echo "collect: merging the ${#files[@]} of $n shard results in $dir; the run is incomplete" >&2
"$kvbench" merge "$@" "${files[@]}" || exit $?
exit 1
