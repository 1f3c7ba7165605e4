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
# shellcheck source=../lib/nginx.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/nginx.sh" http-wakeups
knobs ROUNDS=1 DURATION=3 CONNS=50 BASE_PORT=18300
# shellcheck source=../lib/wakeups.sh
source "$REPO/benchsuite/lib/wakeups.sh"
PORT=$BASE_PORT
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
    PORT=$((PORT + 1))
    start_nginx nolog
    tag=r${round}_nginx-nolog
    row=$(count_wakeups "$OUT" "$tag" "$PID" "$(wrk_units "$tag")" -- \
        taskset -c 1 wrk -t1 -c"$CONNS" -d"${DURATION}s" "http://127.0.0.1:$PORT/")
    printf '%s\t%s\n' "$round" "$row" >>"$TSV"
    stop_nginx
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
