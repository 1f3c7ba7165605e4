#!/usr/bin/env bash
# Connect on the engine, before/after: the plain `connect` command for N connections
# (default 100,000), the client of the 'before' binary (its own raw epoll loop) and of
# the 'after' binary (on the load engine) against the same server, the 'before'
# binary's `serve echo`, started fresh for each run. All rounds in one call (each run
# takes a few seconds; the whole call holds the machine for under ~3 minutes), order
# alternating by round:
#   taskset -c 0 BEFORE serve echo --listen 127.0.0.1:PORT --processes P --idle-timeout 0
#   taskset -c 1 {BEFORE|AFTER} connect 127.0.0.1:PORT -n N --server-pid PIDS -q --json rR-{before|after}.json
# Figures from each JSON: time to all established, client CPU, client RSS per
# connection (RSS growth of the client workers from ready to all up / N) and their
# summed peak RSS.
#
# Run it ONLY under the exclusive lock, through the gate:
#   flock -x /work/locks/gate.lock flock -x /work/locks/bench.lock bash benchsuite/connect/engine.sh run
# and summarize with: bash benchsuite/connect/engine.sh summary
# Knobs: N=100000 ROUNDS=3 PORT=19700 BEFORE=/work/bin/wb-main-eef748a
#        AFTER=target/release/wirebench OUT=benchsuite/runs/<date>/connect-engine
set -euo pipefail

N=${N:-100000}
ROUNDS=${ROUNDS:-3}
PORT=${PORT:-19700}
HOST=127.0.0.1
SERVER_PROCS=$(( (N + 14999) / 15000 ))
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/../.." && pwd)
OUT=${OUT:-$REPO/benchsuite/runs/$(date +%F)/connect-engine}
BEFORE=${BEFORE:-/work/bin/wb-main-eef748a}
AFTER=${AFTER:-$REPO/target/release/wirebench}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
WHAT=${1:?usage: engine.sh run|summary}

if [ "$WHAT" = summary ]; then
python3 - "$OUT" <<'PY'
import json, glob, re, statistics, sys, os
out = sys.argv[1]
rows = {}
for p in sorted(glob.glob(f"{out}/n*-r*-*.json")):
    m = re.search(r"n(\d+)-r(\d+)-(before|after)\.json$", p)
    j = json.load(open(p)); c = j["connect"]
    rows.setdefault((int(m.group(1)), m.group(3)), []).append((int(m.group(2)), {
        "t": c["time_to_establish_s"], "cpu": j["cpu"]["client_s"],
        "rss": c["memory"]["client_rss_per_conn_bytes"],
        "peak": j["client_process"]["peak_rss_bytes"] / 1e6,
        "ok": f"{c['established']:,} established, {c['failed']} failed, {sum(c['lost'].values())} lost"}))
med = statistics.median
for n in sorted({k[0] for k in rows}):
    print(f"\nN = {n:,}\n")
    print("| round | binary | time to all established (s) | client CPU (s) | client RSS per connection (B) | client peak RSS, summed (MB) | result |")
    print("|---|---|---|---|---|---|---|")
    for side in ("before", "after"):
        for r, v in sorted(rows.get((n, side), [])):
            print(f"| {r} | {side} | {v['t']:.3f} | {v['cpu']:.2f} | {v['rss']:.0f} | {v['peak']:.1f} | {v['ok']} |")
    for key, name in (("t", "time to all (s)"), ("cpu", "client CPU (s)"), ("rss", "client RSS per connection (B)"), ("peak", "client peak RSS (MB)")):
        b = [v[key] for _, v in rows.get((n, "before"), [])]; a = [v[key] for _, v in rows.get((n, "after"), [])]
        if a and b:
            print(f"- {name}: before {med(b):.3f} [{min(b):.3f}-{max(b):.3f}], after {med(a):.3f} [{min(a):.3f}-{max(a):.3f}]; after/before {med(a)/med(b):.2f}x")
PY
exit 0
fi

{
    echo "date: $(date -u +%FT%TZ) commit: $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null) before: $BEFORE after: $AFTER N: $N"
    echo "  ulimit -Hn: $(ulimit -Hn); $(grep -E '^MemAvailable:' /proc/meminfo)"
} >>"$OUT/limits.txt"

SERVER_PID=""
stop_server() {
    if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill -INT "$SERVER_PID"
        for _ in $(seq 1 300); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$SERVER_PID" 2>/dev/null || true
    fi
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
}
trap stop_server EXIT

port=$PORT
for r in $(seq 1 "$ROUNDS"); do
    if [ $((r % 2)) = 1 ]; then order="before after"; else order="after before"; fi
    for side in $order; do
        port=$((port + 1))
        tag="n$N-r$r-$side"
        if [ "$side" = before ]; then wb=$BEFORE; else wb=$AFTER; fi
        taskset -c 0 "$BEFORE" serve echo --listen "$HOST:$port" --processes "$SERVER_PROCS" --idle-timeout 0 \
            >"$OUT/$tag-server.stdout" 2>"$OUT/$tag-server.stderr" &
        SERVER_PID=$!
        pids=""
        for _ in $(seq 1 300); do
            pids=$(sed -n 's/^worker pids: //p' "$OUT/$tag-server.stdout")
            [ -n "$pids" ] && break
            sleep 0.1
        done
        [ -n "$pids" ] || { echo "engine.sh: the server did not start" >&2; exit 1; }
        set +e
        timeout -s INT 120 taskset -c 1 "$wb" connect "$HOST:$port" -n "$N" --server-pid "$pids" \
            -q --json "$OUT/$tag.json" >"$OUT/$tag.stdout" 2>"$OUT/$tag.stderr"
        echo "exit $?" >>"$OUT/$tag.stdout"
        set -e
        echo "$(date -u +%T) $tag done" >>"$OUT/timeline.txt"
        stop_server
    done
done
