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
REQUESTS=${REQUESTS:-20000}
CONNS=${CONNS:-50}
PORT=${PORT:-18980}
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/../.." && pwd)
OUT=${OUT:-$REPO/benchsuite/runs/$(date +%F)/http-callgrind}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
for tool in valgrind callgrind_annotate; do
    command -v "$tool" >/dev/null 2>&1 || { echo "!! $tool is missing (apt-get install valgrind)" >&2; exit 2; }
done
WORK=$(mktemp -d "${TMPDIR:-/tmp}/wirebench-httpcg.XXXXXX")
PID=""
trap '[[ -z $PID ]] || { kill -QUIT "$PID" 2>/dev/null; wait "$PID" 2>/dev/null; }; rm -rf "$WORK"' EXIT
sed -e "s#@PREFIX@#$WORK#g" -e "s#@PORT@#$PORT#g" "$SCRIPT_DIR/nginx.conf.in" >"$WORK/nginx.conf"
taskset -c 0 "$NGINX" -c "$WORK/nginx.conf" -p "$WORK/" 2>/dev/null &
PID=$!
for _ in $(seq 50); do
    timeout 1 bash -c "exec 3<>/dev/tcp/127.0.0.1/$PORT" 2>/dev/null && break
    sleep 0.1
done
: >"$OUT/summary.txt"
for spec in "$@"; do
    name=${spec%%=*} bin=${spec#*=}
    # --separate-threads: the load thread's file is the one with the most instructions.
    taskset -c 1 valgrind --tool=callgrind --separate-threads=yes \
        --callgrind-out-file="$WORK/$name.cg" \
        "$bin" http "http://127.0.0.1:$PORT/" -t 1 -c "$CONNS" -n "$REQUESTS" --quiet \
        >"$OUT/$name.stdout" 2>"$OUT/$name.valgrind.txt" || true
    best="" most=0
    for f in "$WORK/$name".cg*; do
        n=$(sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$f")
        if ((n > most)); then most=$n best=$f; fi
    done
    callgrind_annotate --inclusive=no "$best" 2>/dev/null | sed -n 1,60p >"$OUT/$name.annotate.txt"
    printf '%-10s load thread: %d instructions, %.0f per request (-n %d, -c %d)\n' \
        "$name" "$most" "$(python3 -c "print($most / $REQUESTS)")" "$REQUESTS" "$CONNS" | tee -a "$OUT/summary.txt"
done
