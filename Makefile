# kvbench: thin entry points; the logic lives in scripts/.
#   make demo   install what is missing, build, run a 10 s load against a throwaway redis
#   make test   install what is missing, run unit and integration tests
#   make lint   rustfmt check, clippy with warnings as errors, the module layers
#   make bench  client CPU and syscalls per request, kvbench vs redis-benchmark and
#               the loopback floor (bench/floor.c), on one server and on a three-master
#               cluster; memory per connection; p50 at -c 1
#   make fuzz   every fuzz target for FUZZ_SECONDS (default 60) each (nightly, cargo-fuzz)
#   make soak   10 000 connections; a server killed and restarted mid-run (not in CI)
#   make build  release build
#   make install          build, then install kvbench, its man page and bash/zsh/fish
#                         completions under PREFIX (default /usr/local; DESTDIR for staging)
#   make install-links    add the redis-benchmark link to kvbench (never by default)
#   make man    regenerate docs/kvbench.1 from the built binary
#   make clean  remove build output and scratch files

SHELL := /bin/bash
# rustup installs cargo here; make it work from shells that never sourced ~/.cargo/env.
export PATH := $(HOME)/.cargo/bin:$(PATH)
CARGO ?= cargo

.PHONY: all deps build demo test lint bench fuzz soak stops clean install install-links man
PREFIX ?= /usr/local
DESTDIR ?=

all: build

deps:
	bash scripts/ensure-deps.sh

build: deps
	$(CARGO) build --release

demo:
	bash scripts/demo.sh

test: deps
	$(CARGO) test --release --no-fail-fast

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --all-targets -- -D warnings
	cd fuzz && $(CARGO) fmt -- --check
	perl scripts/check-layers.pl

bench:
	bash scripts/bench.sh

fuzz:
	bash scripts/fuzz.sh

soak: deps
	bash scripts/soak.sh

# The whole suite with every kvbench it starts stopped now and then (not in CI).
stops: deps
	bash scripts/stops.sh

# Only cargo is needed to install: no servers (deps) for this one.
install:
	$(CARGO) build --release
	PREFIX="$(PREFIX)" DESTDIR="$(DESTDIR)" bash scripts/install.sh files

install-links:
	PREFIX="$(PREFIX)" DESTDIR="$(DESTDIR)" bash scripts/install.sh links

man:
	$(CARGO) build --release
	target/release/kvbench man > docs/kvbench.1

clean:
	$(CARGO) clean
	rm -rf demo-out bench-out soak-out
