#!/usr/bin/env bash
# Instructions per message of the echo client's open loop with --stages (load thread,
# callgrind), against the C echo server on CPU 0, client on CPU 1.
# Under callgrind the open loop runs ~50x slower: a rate it cannot keep leaves the
# binaries sending different counts (the summary prints them), and then their per-message
# figures do not compare; keep the rate low (4,000/s and 500/s were too high on a 2-core VM).
# Usage: flock -s /work/locks/bench.lock bash benchsuite/echo/stages_callgrind.sh NAME=BIN ...
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/c_echo.sh" stages-callgrind
source "$(dirname "${BASH_SOURCE[0]}")/../lib/callgrind.sh"
knobs STAGES="2s:200,8s:200" ROUNDS=1 BASE_PORT=9790
need_tools valgrind callgrind_annotate
PORT=$BASE_PORT
: >"$OUT/summary.txt"
for ((round = 1; round <= ROUNDS; round++)); do
for spec in "$@"; do
    name=${spec%%=*} bin=${spec#*=}
    tag=r${round}_$name
    start_c_server
    taskset -c 1 valgrind --tool=callgrind --separate-threads=yes \
        --callgrind-out-file="$WORK/$tag.cg" \
        "$bin" echo "127.0.0.1:$PORT" -t 1 -c 10 --size 36 --stages "$STAGES" \
        --quiet --json "$OUT/$tag.json" >"$OUT/$tag.stdout" 2>"$OUT/$tag.valgrind.txt" || true
    stop_server
    most=$(busiest_thread "$WORK/$tag" "$OUT/$tag.annotate.txt")
    sent=$(python3 -c "import json; print(json.load(open('$OUT/$tag.json'))['totals']['sent'])")
    printf 'round %d %-8s load thread: %d instructions, %.1f per message (%d sent, --stages %s)\n' \
        "$round" "$name" "$most" "$(python3 -c "print($most / $sent)")" "$sent" "$STAGES" | tee -a "$OUT/summary.txt"
done
done
