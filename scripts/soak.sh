#!/usr/bin/env bash
# make soak (not in CI): the soak tests in tests/soak.rs, one at a time, with their
# figures on stderr and in soak-out/soak.log:
#   - 10 000 connections at once (-t 2 -c 5000): every request counted as the server saw
#     it, and memory per connection (peak RSS / connections);
#   - a server killed and restarted on the same port mid-run, without and with
#     --reconnect-on-error: nothing lost, kvbench's count against the server's.
# Needs redis-server and redis-cli, and an open-file limit of at least 10 200 for this
# shell (kvbench raises its own soft limit up to the hard one; redis-server inherits it).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
need=10200
if (($(ulimit -n) < need)); then
    ulimit -n "$need" 2>/dev/null || {
        echo "soak: needs ulimit -n >= $need for redis-server's 10 000 clients (the hard limit is $(ulimit -Hn))" >&2
        exit 1
    }
fi
mkdir -p soak-out
cargo build --release
cargo test --release --test soak -- --ignored --nocapture --test-threads=1 2>&1 |
    tee soak-out/soak.log
grep -o 'soak: .*' soak-out/soak.log
