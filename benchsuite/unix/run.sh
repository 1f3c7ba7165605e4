#!/usr/bin/env bash
# A unix-socket echo load against a TCP one, same binary, same server: `wirebench serve
# echo` on CPU 0 listening on both a TCP port and a unix socket (two servers, one at a
# time), `wirebench echo` on CPU 1, 64-byte messages, closed loop. Rounds interleave
# (tcp, unix, tcp, unix, ...); per round the unix/tcp ratio of messages/s and of
# messages per generator CPU-second and per server CPU-second; median [range] over
# rounds. The ratio is a finding about the kernel's two paths, not a goal.
#
# Usage: flock -x /work/locks/bench.lock bash benchsuite/unix/run.sh
# Knobs: WIREBENCH=target/release/wirebench ROUNDS=3 DURATION=5 WARMUP=1 CONNS=10
#        PIPELINE=1 PORT=9810 OUT=benchsuite/runs/<date>/unix
set -euo pipefail
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/../.." && pwd)
WB=${WIREBENCH:-$REPO/target/release/wirebench}
ROUNDS=${ROUNDS:-3} DURATION=${DURATION:-5} WARMUP=${WARMUP:-1}
CONNS=${CONNS:-10} PIPELINE=${PIPELINE:-1} PORT=${PORT:-9810}
OUT=${OUT:-$REPO/benchsuite/runs/$(date +%F)/unix}
mkdir -p "$OUT"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/wirebench-unix.XXXXXX")
SOCK=$WORK/echo.sock
PID=""
stop_server() {
    [[ -n "$PID" ]] || return 0
    kill -TERM "$PID" 2>/dev/null || true
    wait "$PID" 2>/dev/null || true
    PID=""
}
trap 'stop_server; rm -rf "$WORK"' EXIT
{
    echo "date: $(date -u +%FT%TZ)"
    echo "commit: $(git -C "$REPO" rev-parse --short HEAD)"
    echo "binary: $WB"
    echo "rounds: $ROUNDS, ${DURATION}s + ${WARMUP}s warm-up, -c $CONNS --pipeline $PIPELINE"
} | tee "$OUT/meta.txt"

# One load of KIND (tcp or unix) in round R: server on CPU 0, client on CPU 1.
one() { # KIND R
    local kind=$1 r=$2 listen target
    if [[ $kind == tcp ]]; then
        listen=127.0.0.1:$PORT target=127.0.0.1:$PORT
    else
        listen=unix:$SOCK target=unix:$SOCK
    fi
    taskset -c 0 "$WB" serve echo --listen "$listen" --threads 1 >"$OUT/$kind-r$r.server.txt" 2>&1 &
    PID=$!
    for _ in $(seq 100); do
        grep -q "listening on" "$OUT/$kind-r$r.server.txt" && break
        sleep 0.05
    done
    local cpu0
    cpu0=$(awk '{print $14 + $15}' "/proc/$PID/stat")
    taskset -c 1 "$WB" echo "$target" -t 1 -c "$CONNS" --pipeline "$PIPELINE" \
        -d "${DURATION}s" --warmup "${WARMUP}s" -q --json "$OUT/$kind-r$r.json"
    local cpu1
    cpu1=$(awk '{print $14 + $15}' "/proc/$PID/stat")
    echo "$(( cpu1 - cpu0 ))" >"$OUT/$kind-r$r.server_ticks"
    stop_server
}

for ((r = 1; r <= ROUNDS; r++)); do
    one tcp "$r"
    one unix "$r"
done

python3 - "$OUT" "$ROUNDS" "$(getconf CLK_TCK)" "$DURATION" "$WARMUP" <<'PY' | tee "$OUT/summary.md"
import json, statistics, sys
out, rounds, hz, duration, warmup = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
def figures(kind, r):
    j = json.load(open(f"{out}/{kind}-r{r}.json"))
    mps = j["throughput"]["msgs_per_s"]
    cpu = j["cpu"]["client_s"]
    ok = j["totals"]["ok"]
    # The server's CPU over the whole run (warm-up included), per message of the whole run.
    ticks = int(open(f"{out}/{kind}-r{r}.server_ticks").read())
    return {"msgs/s": mps, "msgs per client CPU-s": ok / cpu if cpu else None,
            "server CPU-s per 1e6 msgs (whole run)": ticks / hz / max(ok, 1) * 1e6 * duration / (duration + warmup)}
rows = {}
for r in range(1, rounds + 1):
    t, u = figures("tcp", r), figures("unix", r)
    for k in t:
        if t[k] and u[k]:
            rows.setdefault(k, []).append((t[k], u[k], u[k] / t[k]))
print("| figure | tcp median | unix median | unix/tcp median [range] (n) |")
print("|---|---|---|---|")
for k, v in rows.items():
    q = [x[2] for x in v]
    print(f"| {k} | {statistics.median(x[0] for x in v):,.1f} | {statistics.median(x[1] for x in v):,.1f} | "
          f"{statistics.median(q):.3f}x [{min(q):.3f}-{max(q):.3f}] ({len(q)}) |")
PY
