#!/usr/bin/env bash
# Install what kvbench's demo, tests and bench need, only if something is missing.
#
# Idempotent: when every tool is already on PATH it installs nothing and prints one
# line. Installs with apt-get as root; as any other user it says what to run instead.
set -euo pipefail

# tool to check -> Debian package that provides it
declare -A PACKAGE_OF=(
    [redis-server]=redis-server
    [redis-cli]=redis-tools
    [redis-benchmark]=redis-tools
    [memcached]=memcached
    [strace]=strace
    [/usr/bin/time]=time
    [python3]=python3
    [saslpasswd2]=sasl2-bin
    [openssl]=openssl
    # promtool checks the Prometheus endpoint's text; chromium renders the HTML report;
    # groff formats the man page (tests/prometheus.rs, tests/report.rs, tests/manual.rs).
    [promtool]=prometheus
    [chromium]=chromium
    [groff]=groff-base
)
# Fixed order so messages read the same on every run.
TOOLS=(redis-server redis-cli redis-benchmark memcached strace /usr/bin/time python3 saslpasswd2 openssl promtool chromium groff)

have() {
    # /usr/bin/time is checked by path: `time` alone is the shell keyword.
    if [[ $1 == /* ]]; then [[ -x $1 ]]; else command -v "$1" >/dev/null 2>&1; fi
}

missing_tools=()
missing_pkgs=()
for tool in "${TOOLS[@]}"; do
    if ! have "$tool"; then
        missing_tools+=("$tool")
        pkg=${PACKAGE_OF[$tool]}
        [[ " ${missing_pkgs[*]-} " == *" $pkg "* ]] || missing_pkgs+=("$pkg")
    fi
done

check_cargo() {
    if ! command -v cargo >/dev/null 2>&1 && [[ -r "$HOME/.cargo/env" ]]; then
        # shellcheck disable=SC1091
        . "$HOME/.cargo/env"
    fi
    if ! command -v cargo >/dev/null 2>&1; then
        echo "ensure-deps: cargo not found: install a Rust toolchain (rustup, stable >= 1.85 for edition 2024) and retry" >&2
        exit 1
    fi
}

# Python modules the tests use, from PyPI: hdrh (an independent reader of kvbench's
# histograms and interval logs) and kubernetes-validate (the deploy/kubernetes manifests
# against the Kubernetes schemas). Without a registry the tests that need them say so and
# skip those checks; nothing else depends on them.
ensure_python_modules() {
    local wanted=()
    python3 -c 'import hdrh.log' 2>/dev/null || wanted+=(hdrhistogram)
    python3 -c 'import kubernetes_validate' 2>/dev/null || wanted+=(kubernetes-validate)
    ((${#wanted[@]} > 0)) || return 0
    if ! python3 -m pip --version >/dev/null 2>&1; then
        if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
            echo "ensure-deps: installing python3-pip with apt-get"
            DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3-pip </dev/null ||
                { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3-pip </dev/null; } || true
        fi
    fi
    echo "ensure-deps: installing ${wanted[*]} with pip"
    # Debian's python3 refuses system-wide pip installs (PEP 668) unless told otherwise.
    if python3 -m pip install --quiet "${wanted[@]}" 2>/dev/null ||
        python3 -m pip install --quiet --break-system-packages "${wanted[@]}"; then
        echo "ensure-deps: installed ${wanted[*]}"
    else
        echo "ensure-deps: warning: could not install ${wanted[*]} from PyPI; the tests that use them skip those checks and say so" >&2
    fi
}

if ((${#missing_tools[@]} == 0)); then
    check_cargo
    ensure_python_modules
    echo "ensure-deps: all tools present (redis-server, redis-cli, redis-benchmark, memcached, strace, time, python3, openssl, promtool, chromium, groff)"
    exit 0
fi

echo "ensure-deps: missing ${missing_tools[*]} (Debian packages: ${missing_pkgs[*]})"
if [[ $(id -u) -ne 0 ]]; then
    cat >&2 <<MSG
ensure-deps: not running as root, so cannot install them. Run:

    sudo apt-get update && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y ${missing_pkgs[*]}

then run this command again.
MSG
    exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "ensure-deps: apt-get not found: install ${missing_pkgs[*]} with your package manager" >&2
    exit 1
fi

# The Debian packages would start system daemons on the default ports (6379, 11211).
# kvbench never uses those: its demo, tests and bench start their own servers on free
# ports. So tell invoke-rc.d not to start services while installing, unless the machine
# already has a policy (Docker images ship one that does the same).
POLICY=/usr/sbin/policy-rc.d
if [[ ! -e $POLICY ]]; then
    printf '#!/bin/sh\n# temporary, from kvbench scripts/ensure-deps.sh\nexit 101\n' >"$POLICY"
    chmod +x "$POLICY"
    trap 'rm -f "$POLICY"' EXIT
fi

echo "ensure-deps: installing ${missing_pkgs[*]} with apt-get"
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends "${missing_pkgs[@]}" </dev/null

still_missing=()
for tool in "${missing_tools[@]}"; do
    have "$tool" || still_missing+=("$tool")
done
if ((${#still_missing[@]} > 0)); then
    echo "ensure-deps: still missing after install: ${still_missing[*]}" >&2
    exit 1
fi
echo "ensure-deps: installed ${missing_pkgs[*]}"
check_cargo
ensure_python_modules
