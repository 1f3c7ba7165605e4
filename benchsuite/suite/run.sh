#!/usr/bin/env bash
# The game-server sweep as a suite: examples/echo-servers.toml (wirebench's
# `serve echo` and the C epoll echo server, each alone on CPU 0, the generator on
# CPU 1, 1 to 1000 connections, 3 rounds: the servers take turns), then the
# report (HTML, PNG charts, Markdown table) from the written results.
# SUITE=http-frameworks runs the hertz-benchmark scenario instead
# (examples/http-frameworks.toml: serve http, nginx, Go net/http, fasthttp).
# Run it under the exclusive machine lock:
#   flock -x /work/machine.lock bash benchsuite/suite/run.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
suite=${SUITE:-echo-servers}
out=${1:-benchsuite/runs/$(date -u +%F)/suite-$suite}
bin=target/release/wirebench
[ -x "$bin" ] || { echo "build first: cargo build --release" >&2; exit 2; }
rm -rf "$out"
"$bin" suite "examples/$suite.toml" --out "$out"
"$bin" report "$out" -o "$out/report.html" --png "$out/charts" --markdown "$out/report.md"
cat "$out/report.md"
