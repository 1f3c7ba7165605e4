#!/usr/bin/env bash
# A/B of `serve http` builds against nginx (1 worker, access log off) under the same
# wrk load, many short rounds: every server runs for the whole script (pinned to CPU 0,
# each on its own port; one that is not under load sleeps), and each round puts
# `wrk -t1 -cCONNS -dDURATION` (CPU 1) on each of them in turn, the order rotated every
# round so drift hits all alike. The figure is requests per server CPU-second (the
# server's user+system time from /proc/PID/stat across the wrk run), as a ratio per
# round against nginx and against the first build, then median [range].
#
# Usage: SERVES="main=/work/bin/wb-main-bf6aabb new=target/release/wirebench" \
#        flock -x /work/locks/gate.lock flock -x /work/locks/bench.lock bash benchsuite/http/ab_servers.sh
# Knobs: ROUNDS=8 DURATION=2 CONNS=50 LOG=0 (1: nginx writes its access log)
#        BASE_PORT=18600 OUT=benchsuite/runs/<date>/http-ab-servers
set -euo pipefail
# shellcheck source=../lib/nginx.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/nginx.sh" http-ab-servers
knobs ROUNDS=8 DURATION=2 CONNS=50 LOG=0 BASE_PORT=18600
need_tools wrk taskset python3
[[ -n ${SERVES:-} ]] || { echo "!! SERVES=\"name=BIN ...\" is required" >&2; exit 2; }
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; rm -rf "$WORK"' EXIT
NAMES=() PORTS=()
PORT=$BASE_PORT
start_nginx "$([[ $LOG == 1 ]] && echo log || echo nolog)"
PIDS+=("$PID") NAMES+=(nginx) PORTS+=("$PORT")
PID=""
for spec in $SERVES; do
    PORT=$((PORT + 1))
    taskset -c 0 "${spec#*=}" serve http --listen "127.0.0.1:$PORT" --threads 1 >/dev/null 2>&1 &
    PIDS+=("$!") NAMES+=("${spec%%=*}") PORTS+=("$PORT")
    wait_port "$PORT" "$!" || { echo "!! ${spec%%=*} did not start" >&2; exit 1; }
done
TICK=$(getconf CLK_TCK)
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
RAW=$OUT/raw.tsv
printf 'round\tserver\trequests\tserver_cpu_s\n' >"$RAW"
n=${#NAMES[@]}
for ((round = 1; round <= ROUNDS; round++)); do
    for ((k = 0; k < n; k++)); do
        i=$(((k + round) % n))
        t0=$(ticks "${PIDS[$i]}")
        f=$OUT/r${round}_${NAMES[$i]}.wrk.txt
        taskset -c 1 wrk -t1 -c"$CONNS" -d"${DURATION}s" "http://127.0.0.1:${PORTS[$i]}/" >"$f" 2>&1 || true
        t1=$(ticks "${PIDS[$i]}")
        req=$(sed -n 's/^ *\([0-9]*\) requests in .*/\1/p' "$f")
        printf '%s\t%s\t%s\t%s\n' "$round" "${NAMES[$i]}" "${req:-0}" \
            "$(python3 -c "print(f'{($t1 - $t0) / $TICK:.2f}')")" >>"$RAW"
    done
    echo "   round $round done" >&2
done
python3 - "$RAW" "${NAMES[1]}" <<'PY' | tee "$OUT/summary.md"
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
first = sys.argv[2]
per = {}
for r in rows:
    n, c = float(r["requests"]), float(r["server_cpu_s"])
    per[(r["round"], r["server"])] = n / c if n and c else None
rounds = sorted({r["round"] for r in rows}, key=int)
names = list(dict.fromkeys(r["server"] for r in rows))
def stat(v, fmt):
    v = [x for x in v if x]
    return (fmt.format(statistics.median(v)) + " [" + fmt.format(min(v)) + "-" + fmt.format(max(v)) + "]") if v else "FAIL"
def ratio(a, b):
    return [per[(x, a)] / per[(x, b)] if per.get((x, a)) and per.get((x, b)) else None for x in rounds]
print(f"| server (wrk -t1, {len(rounds)} rounds) | requests per server CPU-s | / nginx, same round | / {first}, same round |")
print("|---|---|---|---|")
for s in names:
    print(f"| {s} | " + stat([per.get((x, s)) for x in rounds], "{:,.0f}") + " | "
          + ("1" if s == "nginx" else stat(ratio(s, "nginx"), "{:.3f}x")) + " | "
          + ("1" if s == first else ("" if s == "nginx" else stat(ratio(s, first), "{:.3f}x"))) + " |")
PY
