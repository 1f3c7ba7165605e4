#!/usr/bin/env bash
# WebSocket: `serve ws` against a Go echo server on gorilla/websocket
# (benchsuite/ws/go-echo), both under `wirebench ws`, as the suite
# examples/ws-servers.toml (servers alone on CPU 0, the generator on CPU 1,
# rounds = 3: the servers take turns), then the report and the figure the issue
# asks for: messages per server CPU-second, serve ws / Go, round by round.
# Run it under the exclusive lock (about 2.5 minutes):
#   flock -x /work/locks/bench.lock bash benchsuite/ws/run.sh [OUT_DIR]
# WIREBENCH=path uses that binary instead of target/release/wirebench.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out=${1:-benchsuite/runs/$(date -u +%F)/ws}
bin=${WIREBENCH:-target/release/wirebench}
[ -x "$bin" ] || { echo "build first: cargo build --release" >&2; exit 2; }
rm -rf "$out"
"$bin" suite examples/ws-servers.toml --out "$out"
"$bin" report "$out" -o "$out/report.html" --markdown "$out/report.md"
python3 benchsuite/ws/summary.py "$out" | tee "$out/summary.md"
