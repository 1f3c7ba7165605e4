#!/usr/bin/env bash
# What each echo client does per message against the C server: system calls by kind
# (reads, EAGAIN reads, writes, epoll waits and ctls), context switches, CPU time and
# epoll events per wait. Counts from perf's tracepoints (benchsuite/lib/count_calls.sh),
# so they cost the client no tracing. The C server is pinned to CPU 0, the client to
# CPU 1, 64-byte messages, no warm-up (every message of the run is counted).
#
# Usage: CLIENTS="new=path/to/wirebench main=/work/bin/wb-main-8a723d0" \
#        flock -x /work/locks/gate.lock flock -x /work/locks/bench.lock bash benchsuite/echo/client_syscalls.sh
# Knobs: ROUNDS=1 DURATION=3 POINTS="10x1 100x16" BASE_PORT=9700 OUT=benchsuite/runs/<date>/echo-syscalls
set -euo pipefail
ROUNDS=${ROUNDS:-1}
DURATION=${DURATION:-3}
POINTS=${POINTS:-"10x1 100x16"}
BASE_PORT=${BASE_PORT:-9700}
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/../.." && pwd)
OUT=${OUT:-$REPO/benchsuite/runs/$(date +%F)/echo-syscalls}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
# shellcheck source=../lib/count_calls.sh
source "$REPO/benchsuite/lib/count_calls.sh"
# shellcheck source=../lib/c_echo.sh
source "$REPO/benchsuite/lib/c_echo.sh"
TSV=$OUT/counts.tsv
printf 'round\tpoint\t%s\n' "$COUNT_HEADER" >"$TSV"
PORT=$BASE_PORT
for ((round = 1; round <= ROUNDS; round++)); do
    for point in $POINTS; do
        conns=${point%x*} depth=${point#*x}
        PORT=$((PORT + 1))
        taskset -c 0 "$BUILD/c_echo_server" 127.0.0.1 "$PORT" 2>/dev/null &
        PID=$!
        wait_port "$PORT"
        tag=r${round}_${point}_C
        row=$(count_calls "$OUT" "$tag" "sed -n 's/.*messages=\([0-9]*\).*/\1/p' $OUT/$tag.stdout" -- \
            taskset -c 1 "$BUILD/c_echo_client" 127.0.0.1 "$PORT" "$conns" "$depth" 64 "$DURATION" 0)
        printf '%s\t%s\t%s\n' "$round" "$point" "$row" >>"$TSV"
        for spec in $CLIENTS; do
            name=${spec%%=*} bin=${spec#*=}
            tag=r${round}_${point}_$name
            units="python3 -c 'import json; j = json.load(open(\"$OUT/$tag.json\")); print(j[\"totals\"][\"ok\"])'"
            row=$(count_calls "$OUT" "$tag" "$units" -- \
                taskset -c 1 "$bin" echo "127.0.0.1:$PORT" -t 1 -c "$conns" --pipeline "$depth" \
                --size 36 -d "${DURATION}s" --quiet --json "$OUT/$tag.json")
            printf '%s\t%s\t%s\n' "$round" "$point" "$row" >>"$TSV"
        done
        stop_server
    done
done
cut -f3- "$TSV" >"$BUILD/rows.tsv"
per_unit_table "$BUILD/rows.tsv" | tee "$OUT/summary.md"
