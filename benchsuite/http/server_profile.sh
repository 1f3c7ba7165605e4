#!/usr/bin/env bash
# Where each HTTP server's CPU goes under the same wrk load: a cpu-clock profile with
# call graphs (perf record -e cpu-clock -g, attached to the server for the run) of
# nginx (one process, access log off) and of `serve http --threads 1` of each wirebench
# in $SERVES, and a flat table of their top symbols (self time, kernel and user alike)
# side by side. Server pinned to CPU 0, wrk -t1 -c$CONNS to CPU 1.
#
# Usage: SERVES="main=/work/bin/wb-main-51ec707" \
#        flock -x /work/locks/gate.lock flock -x /work/locks/bench.lock bash benchsuite/http/server_profile.sh
# Knobs: DURATION=3 CONNS=50 TOP=30 BASE_PORT=18400 OUT=benchsuite/runs/<date>/http-server-profile
set -euo pipefail
# shellcheck source=../lib/nginx.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/nginx.sh" http-server-profile
knobs DURATION=3 CONNS=50 TOP=30 BASE_PORT=18400
PORT=$BASE_PORT
profile() { # TAG: the server in $PID on $PORT
    perf record -q -e cpu-clock -g -o "$WORK/$1.data" -p "$PID" -- sleep "$((DURATION + 1))" 2>/dev/null &
    local perf_pid=$!
    sleep 0.3
    taskset -c 1 wrk -t1 -c"$CONNS" -d"${DURATION}s" "http://127.0.0.1:$PORT/" >"$OUT/$1.wrk.txt" 2>&1 || true
    wait "$perf_pid" || true
    perf report -i "$WORK/$1.data" --no-children --sort sym --stdio -q 2>/dev/null |
        grep -E '^ +[0-9.]+%' | head -n "$TOP" >"$OUT/$1.top.txt" || true # head ends the pipe early
}
PORT=$((PORT + 1))
start_nginx nolog
profile nginx-nolog
stop_nginx
for spec in $SERVES; do
    PORT=$((PORT + 1))
    taskset -c 0 "${spec#*=}" serve http --listen "127.0.0.1:$PORT" --threads 1 >/dev/null 2>&1 &
    PID=$!
    wait_port "$PORT"
    profile "serve-${spec%%=*}"
    stop_server
done
for f in "$OUT"/*.top.txt; do
    echo "== $(basename "$f" .top.txt): $(sed -n 's/^ *\([0-9]*\) requests in .*/\1 requests/p' "${f%.top.txt}.wrk.txt")"
    cat "$f"
done | tee "$OUT/summary.txt"
