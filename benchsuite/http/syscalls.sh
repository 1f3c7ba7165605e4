#!/usr/bin/env bash
# Where a one-thread HTTP server's time goes under the same wrk load: system calls
# per request by name, context switches per request, events per epoll_wait and CPU
# per request, for nginx (1 worker, access log off) and each given `wirebench serve
# http --threads 1`. perf stat on the server process only (syscall tracepoints,
# context-switches and task-clock: no per-call tracing cost as with strace); the
# events per epoll_wait come from a perf record of sys_exit_epoll_wait's return value.
# Server pinned to CPU 0, wrk to CPU 1, loopback.
#
# Usage: flock -x /work/locks/gate.lock flock -x /work/locks/bench.lock \
#          bash benchsuite/http/syscalls.sh NAME=BIN [NAME=BIN ...]
# Knobs: ROUNDS=1 DURATION=4 CONNS=50 BASE_PORT=18900 OUT=dir
set -euo pipefail
# shellcheck source=../lib/nginx.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/nginx.sh" http-syscalls
knobs ROUNDS=1 DURATION=4 CONNS=50 BASE_PORT=18900
need_tools wrk taskset perf python3
PORT=$BASE_PORT
start() { # nginx | BIN
    PORT=$((PORT + 1))
    if [[ $1 == nginx ]]; then
        start_nginx nolog
        return
    fi
    # Unquoted: BIN may be "env VAR=1 /path/wirebench" (exec'd, so the pid is the server's).
    # shellcheck disable=SC2086
    taskset -c 0 $1 serve http --listen "127.0.0.1:$PORT" --threads 1 >/dev/null 2>&1 &
    PID=$!
    wait_port "$PORT" || { echo "!! server did not start" >&2; exit 1; }
}
stop() { # nginx's graceful stop, then TERM for a wirebench server
    kill -QUIT "$PID" 2>/dev/null || true
    stop_server
}
measure() { # ROUND NAME nginx|BIN
    local round=$1 name=$2 tag=r$1-$2
    start "$3"
    # Warm the connections' first requests out of the counts.
    taskset -c 1 wrk -t1 -c"$CONNS" -d1s "http://127.0.0.1:$PORT/" >/dev/null 2>&1 || true
    # CPU and context switches first, with no tracepoint attached (they cost CPU).
    perf stat -x, -e 'task-clock,context-switches' -p "$PID" -o "$OUT/$tag.clean.perf" &
    local stat_pid=$!
    sleep 0.3
    taskset -c 1 wrk -t1 -c"$CONNS" -d"${DURATION}s" "http://127.0.0.1:$PORT/" >"$OUT/$tag.clean.wrk.txt" 2>&1
    kill -INT "$stat_pid"; wait "$stat_pid" || true
    perf stat -x, -e 'task-clock,context-switches,syscalls:sys_enter_*' -p "$PID" -o "$OUT/$tag.perf" &
    stat_pid=$!
    perf record -q -e syscalls:sys_exit_epoll_wait -e syscalls:sys_exit_epoll_pwait -e syscalls:sys_exit_epoll_pwait2 \
        -p "$PID" -o "$WORK/$tag.data" >/dev/null 2>&1 &
    local rec_pid=$!
    sleep 0.3
    taskset -c 1 wrk -t1 -c"$CONNS" -d"${DURATION}s" "http://127.0.0.1:$PORT/" >"$OUT/$tag.wrk.txt" 2>&1
    kill -INT "$stat_pid" "$rec_pid"; wait "$stat_pid" || true; wait "$rec_pid" || true
    perf script -i "$WORK/$tag.data" -F trace 2>/dev/null | sed -n 's/.*0x\([0-9a-f]*\).*/\1/p' >"$WORK/$tag.rets" || true
    stop
    python3 - "$OUT/$tag" "$WORK/$tag.rets" "$name" "$round" >>"$OUT/summary.txt" <<'PY'
import re, sys
tag, rets, name, rnd = sys.argv[1:]
def requests(wrk):
    for line in open(wrk):
        m = re.match(r"\s*(\d+) requests in", line)
        if m:
            return max(int(m.group(1)), 1)
    return 1
def counts(perf):
    c = {}
    for line in open(perf):
        p = line.strip().split(",")
        if len(p) > 2 and p[0] and p[0][0].isdigit():
            c[p[2]] = float(p[0])
    return c
n0, c0 = requests(tag + ".clean.wrk.txt"), counts(tag + ".clean.perf")
n, c = requests(tag + ".wrk.txt"), counts(tag + ".perf")
r = [int(x, 16) for x in open(rets).read().split() if x]
r = [x for x in r if x < 1 << 31]
print(f"== round {rnd} {name}: untraced {n0} requests, server CPU {c0.get('task-clock',0)/n0*1e3:.2f} us/request, "
      f"context switches/request {c0.get('context-switches',0)/n0:.4f}")
print(f"   traced {n} requests: epoll waits {len(r)}, events per wait {sum(r)/max(len(r),1):.2f}")
for k, v in sorted(c.items(), key=lambda kv: -kv[1]):
    if k.startswith("syscalls:") and v:
        print(f"   {k[len('syscalls:sys_enter_'):]:<16} {v/n:.4f}/request")
PY
}
: >"$OUT/summary.txt"
for round in $(seq "$ROUNDS"); do
    measure "$round" nginx-nolog nginx
    for spec in "$@"; do
        measure "$round" "${spec%%=*}" "${spec#*=}"
    done
done
cat "$OUT/summary.txt"
