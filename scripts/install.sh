#!/usr/bin/env bash
# Install a built kvbench, its man page and its shell completions under a prefix.
#
#   scripts/install.sh            what `make install` runs
#   scripts/install.sh links      what `make install-links` runs: the redis-benchmark link
#
# Environment (the Makefile passes them on):
#   KVBENCH  the binary to install (default target/release/kvbench; `make install` builds it)
#   PREFIX   where to install (default /usr/local)
#   DESTDIR  staging root prepended to every path (packaging), default empty
#
# Files, under $DESTDIR$PREFIX:
#   bin/kvbench
#   share/man/man1/kvbench.1                      (`kvbench man`)
#   share/bash-completion/completions/kvbench     (`kvbench completions bash`)
#   share/zsh/site-functions/_kvbench             (`kvbench completions zsh`)
#   share/fish/vendor_completions.d/kvbench.fish  (`kvbench completions fish`)
# and with `links`: bin/redis-benchmark -> kvbench, never by default, as it shadows the
# real redis-benchmark on PATH.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

KVBENCH=${KVBENCH:-target/release/kvbench}
PREFIX=${PREFIX:-/usr/local}
DESTDIR=${DESTDIR:-}
root="$DESTDIR$PREFIX"

fail() {
    echo "install: error: $*" >&2
    exit 1
}

[[ -x $KVBENCH ]] || fail "$KVBENCH is not an executable: run \`make build\` first (make install does)"

# Write the output of a command to a file through a temporary, so a failure leaves no
# half-written file.
write_from() {
    local dest=$1
    shift
    "$@" >"$dest.tmp.$$" || {
        rm -f "$dest.tmp.$$"
        fail "$* failed"
    }
    chmod 0644 "$dest.tmp.$$"
    mv -f "$dest.tmp.$$" "$dest"
}

case ${1:-files} in
files)
    install -d "$root/bin" "$root/share/man/man1" "$root/share/bash-completion/completions" \
        "$root/share/zsh/site-functions" "$root/share/fish/vendor_completions.d"
    install -m 0755 "$KVBENCH" "$root/bin/kvbench"
    # The installed binary writes its own page and scripts, so they match its flags.
    bin="$root/bin/kvbench"
    write_from "$root/share/man/man1/kvbench.1" "$bin" man
    write_from "$root/share/bash-completion/completions/kvbench" "$bin" completions bash
    write_from "$root/share/zsh/site-functions/_kvbench" "$bin" completions zsh
    write_from "$root/share/fish/vendor_completions.d/kvbench.fish" "$bin" completions fish
    echo "install: kvbench, its man page and bash/zsh/fish completions under $root"
    ;;
links)
    [[ -x $root/bin/kvbench ]] || fail "$root/bin/kvbench is not installed: run \`make install\` first"
    # A kvbench without the redis-benchmark front end would read redis-benchmark's flags
    # as memtier's: refuse rather than install a link that misleads.
    if ! "$root/bin/kvbench" redis-benchmark --version >/dev/null 2>&1; then
        fail "this kvbench has no redis-benchmark front end yet: no link installed"
    fi
    ln -sfn kvbench "$root/bin/redis-benchmark"
    echo "install: $root/bin/redis-benchmark -> kvbench"
    ;;
*)
    fail "unknown step '$1' (files or links)"
    ;;
esac
