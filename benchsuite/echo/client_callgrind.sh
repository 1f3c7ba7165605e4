#!/usr/bin/env bash
# User-space instructions per message of `wirebench echo -t 1` against the C echo
# server (CPU 0), 64-byte messages: valgrind's callgrind counts instructions, so the
# figure repeats run to run (no timing: hold the shared lock, not the exclusive one).
# Per point (CONNSxDEPTH:MESSAGES) and binary given as NAME=BIN, the load thread's
# instructions (start-up included) per message, and its top functions.
#
# Usage: flock -s /work/locks/bench.lock bash benchsuite/echo/client_callgrind.sh NAME=BIN [NAME=BIN ...]
# Knobs: POINTS="10x1:40000 100x16:400000" BASE_PORT=9700 OUT=dir
set -euo pipefail
# shellcheck source=../lib/c_echo.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/c_echo.sh" echo-callgrind
# shellcheck source=../lib/callgrind.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/callgrind.sh"
knobs POINTS="10x1:40000 100x16:400000" BASE_PORT=9700
need_tools valgrind callgrind_annotate # apt-get install valgrind
PORT=$BASE_PORT
: >"$OUT/summary.txt"
for point in $POINTS; do
    shape=${point%%:*} msgs=${point#*:}
    conns=${shape%x*} depth=${shape#*x}
    for spec in "$@"; do
        name=${spec%%=*} bin=${spec#*=}
        tag=${shape}_$name
        start_c_server
        # --separate-threads: the load thread's file is the one with the most instructions.
        taskset -c 1 valgrind --tool=callgrind --separate-threads=yes \
            --callgrind-out-file="$WORK/$tag.cg" \
            "$bin" echo "127.0.0.1:$PORT" -t 1 -c "$conns" --pipeline "$depth" --size 36 \
            -n "$msgs" --quiet >"$OUT/$tag.stdout" 2>"$OUT/$tag.valgrind.txt" || true
        stop_server
        most=$(busiest_thread "$WORK/$tag" "$OUT/$tag.annotate.txt")
        printf '%-7s %-10s load thread: %d instructions, %.0f per message (-n %d)\n' \
            "$shape" "$name" "$most" "$(python3 -c "print($most / $msgs)")" "$msgs" | tee -a "$OUT/summary.txt"
    done
done
