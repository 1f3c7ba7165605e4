#!/usr/bin/env bash
# What each HTTP generator's load costs nginx per request (one worker, access log on:
# the point where nginx, not the generator, is the bottleneck). For wrk -t1 and each
# `wirebench http -t1` given as NAME=BIN:
#   - the exact bytes of its request (caught by a tiny loopback listener, one request);
#   - the length of nginx's access log line per request (bytes written / lines);
#   - nginx's CPU per request, context switches, epoll waits and events per wait,
#     from perf stat / perf record on the nginx process only (tracepoints: no per-call
#     tracing cost as with strace), requests counted exactly from the log's lines.
# nginx on CPU 0, the generator on CPU 1, loopback, every run bounded by -d.
#
# Usage: flock -x /work/locks/gate.lock flock -x /work/locks/bench.lock \
#          bash benchsuite/http/nginx_cost.sh NAME=BIN [NAME=BIN ...]
# Knobs: ROUNDS=1 DURATION=3 CONNS="50 200" BASE_PORT=18950 OUT=dir
#        WRK_HEADER="Name: value"  also runs wrk with this header (as "wrk+hdr"): does
#                                  a header alone account for a difference?
set -euo pipefail
# shellcheck source=../lib/nginx.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/nginx.sh" http-nginx-cost
knobs ROUNDS=1 DURATION=3 CONNS="50 200" BASE_PORT=18950
need_tools wrk taskset perf python3
PORT=$BASE_PORT

# The first request a generator sends, byte for byte: a listener that answers every
# request with an empty 200 (so the generator keeps going) and prints the first one.
cat >"$WORK/catch.py" <<'EOF'
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(8)
s.settimeout(10)
buf = b""
# wrk opens (and closes) one probe connection before its load: skip empty ones.
while not buf:
    c, _ = s.accept()
    c.settimeout(10)
    while b"\r\n\r\n" not in buf:
        d = c.recv(4096)
        if not d:
            break
        buf += d
c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
c.close()
req = buf.split(b"\r\n\r\n")[0] + b"\r\n\r\n"
print(f"{len(req)} bytes: {req!r}")
EOF
catch_request() { # NAME COMMAND... (the command gets the URL appended)
    local name=$1
    shift
    PORT=$((PORT + 1))
    python3 "$WORK/catch.py" "$PORT" >"$WORK/catch.txt" &
    local lp=$!
    wait_port_listen
    timeout 5 "$@" "http://127.0.0.1:$PORT/" >/dev/null 2>&1 || true
    wait "$lp" || true
    printf '%-10s request: %s\n' "$name" "$(cat "$WORK/catch.txt")" | sed "s/:$PORT/:PORT/g" >>"$OUT/summary.txt"
}
# The catcher accepts one connection only: wait for its socket without connecting.
wait_port_listen() {
    local i
    for ((i = 0; i < 50; i++)); do
        ss -Hltn "sport = :$PORT" | grep -q . && return 0
        sleep 0.05
    done
}

: >"$OUT/summary.txt"
catch_request wrk wrk -t1 -c1 -d1s
for spec in "$@"; do
    catch_request "${spec%%=*}" "${spec#*=}" http -t 1 -c 1 -n 1 --quiet
done

measure() { # ROUND C NAME COMMAND... (URL appended)
    local round=$1 c=$2 name=$3 tag=r$1_c$2_$3
    shift 3
    PORT=$((PORT + 1))
    start_nginx log
    local dir=$NGINX_DIR
    : >"$dir/access.log"
    perf stat -x, -o "$OUT/$tag.perf" -e 'task-clock,context-switches,syscalls:sys_enter_epoll_wait,syscalls:sys_enter_write,syscalls:sys_enter_recvfrom,syscalls:sys_enter_read,syscalls:sys_enter_writev' -p "$PID" &
    local stat_pid=$!
    perf record -q -e syscalls:sys_exit_epoll_wait -p "$PID" -o "$WORK/$tag.data" >/dev/null 2>&1 &
    local rec_pid=$!
    sleep 0.3
    taskset -c 1 "$@" "http://127.0.0.1:$PORT/" >"$OUT/$tag.stdout" 2>&1 || true
    sleep 0.1
    kill -INT "$stat_pid" "$rec_pid"
    wait "$stat_pid" || true
    wait "$rec_pid" || true
    perf script -i "$WORK/$tag.data" -F trace 2>/dev/null | awk '{print $NF}' >"$WORK/$tag.rets" || true
    stop_nginx
    python3 - "$OUT/$tag.perf" "$WORK/$tag.rets" "$dir/access.log" "$round" "$c" "$name" "$OUT/$tag.logline" >>"$OUT/summary.tsv" <<'PY'
import sys
perf, rets, log, rnd, c, name, keep = sys.argv[1:]
data = open(log, "rb").read()
lines = data.count(b"\n") or 1
open(keep, "wb").write(data[: data.find(b"\n") + 1])
cnt = {}
for line in open(perf):
    p = line.strip().split(",")
    if len(p) > 2 and p[0] and p[0][0].isdigit():
        cnt[p[2].replace("syscalls:sys_enter_", "")] = float(p[0])
r = [int(x, 0) for x in open(rets).read().split() if x]
r = [x for x in r if 0 <= x < 1 << 31]
print("\t".join(str(v) for v in [
    rnd, c, name, lines, f"{len(data) / lines:.1f}",
    f"{cnt.get('task-clock', 0) / lines * 1e3:.3f}",
    f"{cnt.get('context-switches', 0) / lines:.4f}",
    f"{cnt.get('epoll_wait', 0) / lines:.4f}",
    f"{sum(r) / max(len(r), 1):.2f}",
    f"{(cnt.get('recvfrom', 0) + cnt.get('read', 0)) / lines:.4f}",
    f"{(cnt.get('write', 0) + cnt.get('writev', 0)) / lines:.4f}",
]))
PY
}
printf 'round\tconns\tgenerator\trequests\tlog_bytes_per_req\tnginx_us_per_req\tcs_per_req\tepoll_waits_per_req\tevents_per_wait\treads_per_req\twrites_per_req\n' >"$OUT/summary.tsv"
for ((round = 1; round <= ROUNDS; round++)); do
    for c in $CONNS; do
        measure "$round" "$c" wrk wrk -t1 -c"$c" -d"${DURATION}s"
        [[ -z ${WRK_HEADER:-} ]] ||
            measure "$round" "$c" wrk+hdr wrk -t1 -c"$c" -d"${DURATION}s" -H "$WRK_HEADER"
        for spec in "$@"; do
            measure "$round" "$c" "${spec%%=*}" "${spec#*=}" http -t 1 -c "$c" -d "${DURATION}s" --quiet
        done
    done
done
for f in "$OUT"/r1_c*_*.logline; do
    printf '%s log line: %s\n' "$(basename "$f" .logline)" "$(cat "$f")" >>"$OUT/summary.txt"
done
column -t -s $'\t' "$OUT/summary.tsv" >>"$OUT/summary.txt"
cat "$OUT/summary.txt"
