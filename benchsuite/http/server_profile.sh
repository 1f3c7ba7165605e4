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
DURATION=${DURATION:-3}
CONNS=${CONNS:-50}
TOP=${TOP:-30}
BASE_PORT=${BASE_PORT:-18400}
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/../.." && pwd)
OUT=${OUT:-$REPO/benchsuite/runs/$(date +%F)/http-server-profile}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/wirebench-profile.XXXXXX")
PID=""
stop_server() {
    [[ -n "$PID" ]] || return 0
    kill -TERM "$PID" 2>/dev/null || true
    wait "$PID" 2>/dev/null || true
    PID=""
}
trap 'stop_server; rm -rf "$WORK"' EXIT
wait_port() {
    for _ in $(seq 50); do
        timeout 1 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}
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
dir=$WORK/nginx
mkdir -p "$dir"
sed -e "s#@PREFIX@#$dir#g" -e "s#@PORT@#$PORT#g" "$SCRIPT_DIR/nginx.conf.in" >"$dir/nginx.conf"
taskset -c 0 "$NGINX" -c "$dir/nginx.conf" -p "$dir/" 2>/dev/null &
PID=$!
wait_port "$PORT"
profile nginx-nolog
stop_server
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
