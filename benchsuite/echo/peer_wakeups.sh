#!/usr/bin/env bash
# How often the C echo server (the peer of every echo client here) sleeps and is woken
# per message, under the C client and under each wirebench in $CLIENTS, and how often
# the client itself is (benchsuite/lib/wakeups.sh says what is counted). The server is
# pinned to CPU 0, the client to CPU 1, 64-byte messages, one server per client run.
#
# Usage: CLIENTS="new=path/to/wirebench main=/work/bin/wb-main-51ec707" \
#        flock -x /work/locks/gate.lock flock -x /work/locks/bench.lock bash benchsuite/echo/peer_wakeups.sh
# Knobs: ROUNDS=1 DURATION=3 POINTS="100x16" BASE_PORT=9800 OUT=benchsuite/runs/<date>/echo-wakeups
set -euo pipefail
ROUNDS=${ROUNDS:-1}
DURATION=${DURATION:-3}
POINTS=${POINTS:-"100x16"}
BASE_PORT=${BASE_PORT:-9800}
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/../.." && pwd)
OUT=${OUT:-$REPO/benchsuite/runs/$(date +%F)/echo-wakeups}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
# shellcheck source=../lib/wakeups.sh
source "$REPO/benchsuite/lib/wakeups.sh"
# shellcheck source=../lib/c_echo.sh
source "$REPO/benchsuite/lib/c_echo.sh"
TSV=$OUT/counts.tsv
printf 'round\tpoint\t%s\n' "$WAKE_HEADER" >"$TSV"
PORT=$BASE_PORT
start_c_server() {
    PORT=$((PORT + 1))
    taskset -c 0 "$BUILD/c_echo_server" 127.0.0.1 "$PORT" 2>/dev/null &
    PID=$!
    wait_port "$PORT"
}
for ((round = 1; round <= ROUNDS; round++)); do
    for point in $POINTS; do
        conns=${point%x*} depth=${point#*x}
        start_c_server
        tag=r${round}_${point}_C
        row=$(count_wakeups "$OUT" "$tag" "$PID" "sed -n 's/.*messages=\([0-9]*\).*/\1/p' $OUT/$tag.stdout" -- \
            taskset -c 1 "$BUILD/c_echo_client" 127.0.0.1 "$PORT" "$conns" "$depth" 64 "$DURATION" 0)
        printf '%s\t%s\t%s\n' "$round" "$point" "$row" >>"$TSV"
        stop_server
        for spec in $CLIENTS; do
            name=${spec%%=*} bin=${spec#*=}
            start_c_server
            tag=r${round}_${point}_$name
            units="python3 -c 'import json; j = json.load(open(\"$OUT/$tag.json\")); print(j[\"totals\"][\"ok\"])'"
            row=$(count_wakeups "$OUT" "$tag" "$PID" "$units" -- \
                taskset -c 1 "$bin" echo "127.0.0.1:$PORT" -t 1 -c "$conns" --pipeline "$depth" \
                --size 36 -d "${DURATION}s" --quiet --json "$OUT/$tag.json")
            printf '%s\t%s\t%s\n' "$round" "$point" "$row" >>"$TSV"
            stop_server
        done
    done
done
cut -f3- "$TSV" >"$BUILD/rows.tsv"
wakeups_table "$BUILD/rows.tsv" | tee "$OUT/summary.md"
