#!/usr/bin/env bash
# User-space instructions per request of `wirebench http -t1` against nginx (one
# worker, access log off), by function: valgrind's callgrind counts instructions, so
# the figure repeats run to run (no timing: hold the shared lock, not the exclusive
# one). Per binary given as NAME=BIN: -c CONNS, -n REQUESTS (bounded), then the total
# instructions of the load thread and the top functions, per request.
#
# Usage: flock -s /work/locks/bench.lock bash benchsuite/http/client_callgrind.sh NAME=BIN [NAME=BIN ...]
# Knobs: REQUESTS=20000 CONNS=50 PORT=18980 OUT=dir
set -euo pipefail
# shellcheck source=../lib/nginx.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/nginx.sh" http-callgrind
# shellcheck source=../lib/callgrind.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/callgrind.sh"
knobs REQUESTS=20000 CONNS=50 PORT=18980
need_tools valgrind callgrind_annotate # apt-get install valgrind
start_nginx nolog
: >"$OUT/summary.txt"
for spec in "$@"; do
    name=${spec%%=*} bin=${spec#*=}
    # --separate-threads: the load thread's file is the one with the most instructions.
    taskset -c 1 valgrind --tool=callgrind --separate-threads=yes \
        --callgrind-out-file="$WORK/$name.cg" \
        "$bin" http "http://127.0.0.1:$PORT/" -t 1 -c "$CONNS" -n "$REQUESTS" --quiet \
        >"$OUT/$name.stdout" 2>"$OUT/$name.valgrind.txt" || true
    most=$(busiest_thread "$WORK/$name" "$OUT/$name.annotate.txt")
    printf '%-10s load thread: %d instructions, %.0f per request (-n %d, -c %d)\n' \
        "$name" "$most" "$(python3 -c "print($most / $REQUESTS)")" "$REQUESTS" "$CONNS" | tee -a "$OUT/summary.txt"
done
stop_nginx
