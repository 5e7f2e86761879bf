#!/usr/bin/env bash
# make fuzz: every cargo-fuzz target in fuzz/ for FUZZ_SECONDS (default 60) each, one
# after the other, then a table of executions per target. Exits 1 if any target found
# something (its input is saved under fuzz/artifacts/<target>/).
#
# Each target starts from its committed seeds (fuzz/seeds/<target>/, captured from real
# servers by fuzz/capture-seeds.py) plus what earlier runs kept (fuzz/corpus/<target>/,
# not committed). Built with cargo-fuzz's defaults: optimized, with debug assertions and
# overflow checks, under AddressSanitizer, whose malloc hooks let libFuzzer report any
# single allocation above -rss_limit_mb (a parser reserving what a file merely claims).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../fuzz"
seconds=${FUZZ_SECONDS:-60}
if ! cargo +nightly --version >/dev/null 2>&1; then
    echo "fuzz: needs the nightly toolchain: rustup toolchain install nightly" >&2
    exit 1
fi
# cargo-fuzz is a cargo subcommand from the package registry: installed on first use
# (a few minutes), as `make test` installs the servers it needs.
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    echo "fuzz: installing cargo-fuzz (cargo install cargo-fuzz)"
    cargo install cargo-fuzz || {
        echo "fuzz: could not install cargo-fuzz; install it by hand: cargo install cargo-fuzz" >&2
        exit 1
    }
fi
targets=${FUZZ_TARGETS:-$(cargo +nightly fuzz list)}
cargo +nightly fuzz build
mkdir -p logs
summary=()
failed=0
for target in $targets; do
    mkdir -p "corpus/$target"
    dirs=("corpus/$target")
    [[ -d seeds/$target ]] && dirs+=("seeds/$target")
    # A dictionary of the format's keywords and boundary numbers, where there is one.
    dict=()
    case $target in
        resp | cluster) dict=(-dict=dict/resp.dict) ;;
        memcache_text | import) dict=("-dict=dict/$target.dict") ;;
    esac
    log=logs/$target.log
    echo "fuzz: $target for ${seconds}s"
    status=ok
    # -timeout: one input taking 10 s is a hang; -rss_limit_mb: libFuzzer's default, also
    # the largest single allocation allowed.
    if ! cargo +nightly fuzz run "$target" "${dirs[@]}" -- \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "${dict[@]}" \
        >"$log" 2>&1; then
        status="FOUND (see $log and artifacts/$target/)"
        failed=1
    fi
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
    summary+=("$(printf '%-16s %12s %10s  %s' "$target" "${runs:-?}" "${rate:-?}" "$status")")
done
printf '%-16s %12s %10s  %s\n' target executions 'exec/s' result
printf '%s\n' "${summary[@]}"
exit "$failed"
