#!/usr/bin/env bash
# Where nginx (one worker, access log on) spends its CPU under each generator's load:
# a perf profile (cpu-clock, call graphs) of the nginx process only, under wrk -t1 and
# each `wirebench http -t1` given as NAME=BIN, c=50, DURATION seconds each. Prints per
# generator the requests (the access log's lines) and the share of nginx's samples in
# a few places that differ between generators: waking the generator's thread when a
# response reaches its socket (sock_def_readable, under nginx's own send), nginx's
# User-Agent scan (ngx_strstrn), its header parser, and its log write.
# nginx on CPU 0, the generator on CPU 1, loopback, every run bounded by -d.
#
# Usage: flock -x /work/locks/gate.lock flock -x /work/locks/bench.lock \
#          bash benchsuite/http/nginx_profile.sh NAME=BIN [NAME=BIN ...]
# Knobs: DURATION=3 CONNS=50 BASE_PORT=18990 OUT=dir (keeps NAME.report.txt per run)
set -euo pipefail
# shellcheck source=../lib/nginx.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/nginx.sh" http-nginx-profile
knobs DURATION=3 CONNS=50 BASE_PORT=18990
PORT=$BASE_PORT
profile() { # NAME COMMAND... (URL appended)
    local name=$1
    shift
    PORT=$((PORT + 1))
    start_nginx log
    local dir=$NGINX_DIR
    : >"$dir/access.log"
    perf record -q -e cpu-clock -g -p "$PID" -o "$WORK/$name.data" >/dev/null 2>&1 &
    local rec=$!
    sleep 0.2
    taskset -c 1 "$@" "http://127.0.0.1:$PORT/" >"$OUT/$name.stdout" 2>&1 || true
    kill -INT "$rec"
    wait "$rec" || true
    local requests
    requests=$(wc -l <"$dir/access.log")
    stop_nginx
    perf report -i "$WORK/$name.data" --no-children --sort symbol --stdio -g none 2>/dev/null |
        grep -E '^ +[0-9]' | sed -n 1,60p >"$OUT/$name.report.txt" || true
    # Samples whose call chain holds sock_def_readable: nginx waking the generator.
    perf report -i "$WORK/$name.data" --children --sort symbol --stdio -g none 2>/dev/null |
        grep -E '^ +[0-9]' >"$WORK/$name.children" || true
    # The first column of the row whose symbol (the field after "[k]" or "[.]") is $2.
    pick() { awk -v s="$2" '{for (i = 2; i < NF; i++) if ($i ~ /^\[.\]$/ && $(i + 1) == s) {print $1; exit}}' "$1"; }
    printf '%-10s requests %-8s waking the generator (sock_def_readable, incl. children) %-7s ngx_strstrn %-7s ngx_http_parse_header_line %-7s ext4_buffered_write_iter (incl.) %s\n' \
        "$name" "$requests" "$(pick "$WORK/$name.children" sock_def_readable)" \
        "$(pick "$OUT/$name.report.txt" ngx_strstrn)" "$(pick "$OUT/$name.report.txt" ngx_http_parse_header_line)" \
        "$(pick "$WORK/$name.children" ext4_buffered_write_iter)" | tee -a "$OUT/summary.txt"
}
: >"$OUT/summary.txt"
profile wrk wrk -t1 -c"$CONNS" -d"${DURATION}s"
for spec in "$@"; do
    profile "${spec%%=*}" "${spec#*=}" http -t 1 -c "$CONNS" -d "${DURATION}s" --quiet
done
