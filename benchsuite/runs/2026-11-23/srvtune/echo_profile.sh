#!/usr/bin/env bash
# Where `serve echo --threads 1`'s CPU goes at CONNSxDEPTH under the C client, beside
# the C epoll server's: perf record -e cpu-clock -g attached to the server (CPU 0) for
# the run of the C client (CPU 1, 64-byte messages), top symbols by self time.
# Usage: SERVES="main=/work/bin/wb-main-80104a0" OUT=... \
#        flock -x /work/locks/gate.lock flock -x /work/locks/bench.lock bash echo_profile.sh
# Knobs: CONNS=10 DEPTH=1 DURATION=3 TOP=30 BASE_PORT=9700
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../../../.." && pwd)
# Not through benchsuite/lib (its preamble finds the repository from the script's
# directory, two levels up): the same steps inline.
CONNS=${CONNS:-10} DEPTH=${DEPTH:-1} DURATION=${DURATION:-3} TOP=${TOP:-30} BASE_PORT=${BASE_PORT:-9700}
OUT=${OUT:?OUT=dir is required}
mkdir -p "$OUT"
WORK=$(mktemp -d /tmp/srvtune-echo-profile.XXXXXX)
BUILD=$WORK
PID=""
stop_server() { [[ -n $PID ]] || return 0; kill -TERM "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; PID=""; }
trap 'stop_server; rm -rf "$WORK"' EXIT
wait_port() { for _ in $(seq 50); do timeout 1 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null && return 0; sleep 0.1; done; return 1; }
gcc -O2 -o "$BUILD/c_echo_server" "$REPO/benchsuite/echo/c_echo_server.c"
gcc -O2 -o "$BUILD/c_echo_client" "$REPO/benchsuite/echo/c_echo_client.c"
start_c_server() { PORT=$((PORT + 1)); taskset -c 0 "$BUILD/c_echo_server" 127.0.0.1 "$PORT" 2>/dev/null & PID=$!; wait_port "$PORT"; }
PORT=$BASE_PORT
profile() { # TAG
    perf record -q -e cpu-clock -g -o "$WORK/$1.data" -p "$PID" -- sleep "$((DURATION + 1))" 2>/dev/null &
    local perf_pid=$!
    sleep 0.3
    taskset -c 1 "$BUILD/c_echo_client" 127.0.0.1 "$PORT" "$CONNS" "$DEPTH" 64 "$DURATION" 0 >"$OUT/$1.client.txt" 2>&1 || true
    wait "$perf_pid" || true
    perf report -i "$WORK/$1.data" --no-children --sort sym --stdio -q 2>/dev/null |
        grep -E '^ +[0-9.]+%' | head -n "$TOP" >"$OUT/$1.top.txt" || true
    perf report -i "$WORK/$1.data" --no-children --sort dso --stdio -q 2>/dev/null |
        grep -E '^ +[0-9.]+%' | head -n 8 >"$OUT/$1.dso.txt" || true
}
start_c_server
profile c-server
stop_server
for spec in $SERVES; do
    PORT=$((PORT + 1))
    taskset -c 0 "${spec#*=}" serve echo --listen "127.0.0.1:$PORT" --threads 1 >/dev/null 2>&1 &
    PID=$!
    wait_port "$PORT"
    profile "serve-${spec%%=*}"
    stop_server
done
for f in "$OUT"/*.top.txt; do
    echo "== $(basename "$f" .top.txt): $(cat "${f%.top.txt}.client.txt")"
    cat "${f%.top.txt}.dso.txt"
    cat "$f"
done | tee "$OUT/summary.txt"
