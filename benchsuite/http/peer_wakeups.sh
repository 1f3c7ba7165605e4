#!/usr/bin/env bash
# How often wrk (the peer of every HTTP server here) sleeps and is woken per request,
# against nginx (one process, access log off) and against `serve http --threads 1` of
# each wirebench in $SERVES, and how often the server itself is
# (benchsuite/lib/wakeups.sh says what is counted). Server pinned to CPU 0, wrk -t1
# -c$CONNS to CPU 1.
#
# Usage: SERVES="new=path/to/wirebench main=/work/bin/wb-main-51ec707" \
#        flock -x /work/locks/gate.lock flock -x /work/locks/bench.lock bash benchsuite/http/peer_wakeups.sh
# Knobs: ROUNDS=1 DURATION=3 CONNS=50 BASE_PORT=18300 OUT=benchsuite/runs/<date>/http-wakeups
set -euo pipefail
ROUNDS=${ROUNDS:-1}
DURATION=${DURATION:-3}
CONNS=${CONNS:-50}
BASE_PORT=${BASE_PORT:-18300}
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/../.." && pwd)
OUT=${OUT:-$REPO/benchsuite/runs/$(date +%F)/http-wakeups}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
# shellcheck source=../lib/wakeups.sh
source "$REPO/benchsuite/lib/wakeups.sh"
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/wirebench-wakeups.XXXXXX")
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
start_nginx() {
    PORT=$((PORT + 1))
    local dir=$WORK/nginx-$PORT
    mkdir -p "$dir"
    sed -e "s#@PREFIX@#$dir#g" -e "s#@PORT@#$PORT#g" "$SCRIPT_DIR/nginx.conf.in" >"$dir/nginx.conf"
    taskset -c 0 "$NGINX" -c "$dir/nginx.conf" -p "$dir/" 2>/dev/null &
    PID=$!
    wait_port "$PORT"
}
start_serve() { # BIN
    PORT=$((PORT + 1))
    taskset -c 0 "$1" serve http --listen "127.0.0.1:$PORT" --threads 1 >/dev/null 2>&1 &
    PID=$!
    wait_port "$PORT"
}
wrk_units() { echo "sed -n 's/^ *\([0-9]*\) requests in .*/\1/p' $OUT/$1.stdout"; }
TSV=$OUT/counts.tsv
printf 'round\t%s\n' "$WAKE_HEADER" >"$TSV"
for ((round = 1; round <= ROUNDS; round++)); do
    start_nginx
    tag=r${round}_nginx-nolog
    row=$(count_wakeups "$OUT" "$tag" "$PID" "$(wrk_units "$tag")" -- \
        taskset -c 1 wrk -t1 -c"$CONNS" -d"${DURATION}s" "http://127.0.0.1:$PORT/")
    printf '%s\t%s\n' "$round" "$row" >>"$TSV"
    stop_server
    for spec in $SERVES; do
        start_serve "${spec#*=}"
        tag=r${round}_serve-${spec%%=*}
        row=$(count_wakeups "$OUT" "$tag" "$PID" "$(wrk_units "$tag")" -- \
            taskset -c 1 wrk -t1 -c"$CONNS" -d"${DURATION}s" "http://127.0.0.1:$PORT/")
        printf '%s\t%s\n' "$round" "$row" >>"$TSV"
        stop_server
    done
done
cut -f2- "$TSV" >"$WORK/rows.tsv"
wakeups_table "$WORK/rows.tsv" | tee "$OUT/summary.md"
