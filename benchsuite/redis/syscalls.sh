#!/usr/bin/env bash
# What redis-server does per request under each generator: its read, write and
# epoll_wait calls and its CPU time (perf stat on the server process only: syscall
# tracepoints and task-clock, no per-call tracing cost as with strace), for
# redis-benchmark -P P, `wirebench redis --pipeline P` (burst, the default) and
# `--pipeline-mode sliding`. Server pinned to CPU 0, generator to CPU 1, loopback.
#
# Usage: flock -x /work/locks/gate.lock flock -x /work/locks/bench.lock bash benchsuite/redis/syscalls.sh
# Knobs: ROUNDS=2, N=1000000, P=16, BASE_PORT=18800, WIREBENCH=path, OUT=dir (syscalls.tsv)
set -euo pipefail
ROUNDS=${ROUNDS:-2}
N=${N:-1000000}
P=${P:-16}
BASE_PORT=${BASE_PORT:-18800}
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/../.." && pwd)
OUT=${OUT:-$REPO/benchsuite/runs/$(date +%F)/redis-syscalls}
mkdir -p "$OUT"
WB=${WIREBENCH:-$REPO/target/release/wirebench}
for tool in redis-server redis-benchmark redis-cli taskset perf; do
    command -v "$tool" >/dev/null 2>&1 || { echo "!! $tool is missing" >&2; exit 2; }
done
SERVER_PID=""
trap '[[ -n $SERVER_PID ]] && kill "$SERVER_PID" 2>/dev/null; true' EXIT
PORT=$BASE_PORT
TSV=$OUT/syscalls.tsv
printf 'round\tgenerator\trequests\tserver_reads\tserver_writes\tserver_epoll_waits\tserver_task_clock_ms\tcommands\n' >"$TSV"

measure() { # ROUND TAG COMMAND...
    local round=$1 tag=$2; shift 2
    PORT=$((PORT + 1))
    taskset -c 0 redis-server --port "$PORT" --bind 127.0.0.1 --save "" --appendonly no >/dev/null 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 100); do
        [[ $(redis-cli -p "$PORT" PING 2>/dev/null) == PONG ]] && break
        sleep 0.05
    done
    local stat=$OUT/r$round-$tag.perf
    perf stat -x, -e task-clock,syscalls:sys_enter_read,syscalls:sys_enter_write,syscalls:sys_enter_epoll_wait \
        -p "$SERVER_PID" -o "$stat" &
    local perf_pid=$!
    sleep 0.3
    "$@" >"$OUT/r$round-$tag.txt" 2>&1
    local commands
    commands=$(redis-cli -p "$PORT" INFO stats | awk -F: '/total_commands_processed/{print $2+0}')
    kill -INT "$perf_pid"; wait "$perf_pid" || true
    kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
    v() { awk -F, -v e="$1" '$3 ~ e {print $1+0}' "$stat"; }
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$tag" "$N" "$(v sys_enter_read)" \
        "$(v sys_enter_write)" "$(v sys_enter_epoll_wait)" "$(v task-clock)" "$commands" >>"$TSV"
}

for round in $(seq "$ROUNDS"); do
    measure "$round" redis-benchmark taskset -c 1 redis-benchmark -p "$((PORT + 1))" -t set -c 50 -P "$P" -n "$N" -r 10000 -d 3 -q
    measure "$round" wirebench-burst taskset -c 1 "$WB" redis "127.0.0.1:$((PORT + 1))" -t 1 -c 50 --pipeline "$P" -n "$N" --command set --keyspace 10000 --size 3 -q
    measure "$round" wirebench-sliding taskset -c 1 "$WB" redis "127.0.0.1:$((PORT + 1))" -t 1 -c 50 --pipeline "$P" -n "$N" --command set --keyspace 10000 --size 3 -q --pipeline-mode sliding
done
column -t "$TSV"
