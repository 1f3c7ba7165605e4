#!/usr/bin/env bash
# AMQP churn, one binary against another in the same run: the churn-direct point of
# benchsuite/amqp/run.sh (`amqp --mode churn -d 5s --concurrency 50 --messages 10
# --size 100`, connections/s) with each binary on both ends (its `serve amqp` on CPU 0,
# its client on CPU 1), and crossed (A's client against B's broker and back), so a
# change shows on the side that made it. Rounds interleaved; median and range.
#
# Usage: A=old/wirebench B=new/wirebench flock -x /work/locks/bench.lock \
#            bash benchsuite/amqp/churn_ab.sh
# Knobs: ROUNDS=3  DURATION=5  OUT=benchsuite/runs/<date>/amqp-churn-ab
# Output: $OUT/raw.tsv (round, client, broker, connections/s), $OUT/*.json, $OUT/summary.md
set -euo pipefail

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-5}
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/../.." && pwd)
OUT=${OUT:-$REPO/benchsuite/runs/$(date +%F)/amqp-churn-ab}
: "${A:?A=path of the first wirebench binary}"
: "${B:?B=path of the second wirebench binary}"
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
PORT=20710
BROKER_PID=""

log() { printf '%s\n' "$*" >&2; }
stop_broker() {
    if [[ -n "$BROKER_PID" ]] && kill -0 "$BROKER_PID" 2>/dev/null; then
        kill -TERM "$BROKER_PID" 2>/dev/null || true
        wait "$BROKER_PID" 2>/dev/null || true
    fi
    BROKER_PID=""
}
trap stop_broker EXIT
trap 'exit 130' INT TERM

for x in "$A" "$B"; do [[ -x "$x" ]] || { log "!! $x is not an executable"; exit 2; }; done
printf 'A\t%s\nB\t%s\n' "$A" "$B" >"$OUT/binaries.txt"
printf 'round\tclient\tbroker\tvalue\tunit\n' >"$OUT/raw.tsv"

start_broker() { # binary
    taskset -c 0 "$1" serve amqp --listen 127.0.0.1:$PORT --threads 1 >>"$OUT/broker.log" 2>&1 &
    BROKER_PID=$!
    for _ in $(seq 1 100); do
        python3 -c "import socket; socket.create_connection(('127.0.0.1', $PORT), 0.2).close()" 2>/dev/null && return 0
        sleep 0.05
    done
    log "!! the broker did not listen"; return 1
}

for r in $(seq 1 "$ROUNDS"); do
    for pair in AA BB AB BA; do
        c=${pair:0:1}; s=${pair:1:1}
        cbin=$A; [[ $c == B ]] && cbin=$B
        sbin=$A; [[ $s == B ]] && sbin=$B
        start_broker "$sbin"
        f="$OUT/r$r-client$c-broker$s.json"
        v=FAIL
        if taskset -c 1 "$cbin" amqp amqp://guest:guest@127.0.0.1:$PORT/ --mode churn \
            -d "${DURATION}s" --concurrency 50 --messages 10 --size 100 -t 1 -q --json "$f" \
            >"${f%.json}.txt" 2>&1; then
            v=$(python3 -c "import json,sys; print(round(json.load(open(sys.argv[1]))['amqp']['connections_per_s']))" "$f")
        fi
        stop_broker
        printf '%s\t%s\t%s\t%s\tconnections/s\n' "$r" "$c" "$s" "$v" >>"$OUT/raw.tsv"
        log "round $r client $c broker $s: $v connections/s"
    done
done

python3 - "$OUT" <<'PY'
import csv, statistics, sys
out = sys.argv[1]
rows = list(csv.DictReader(open(f"{out}/raw.tsv"), delimiter="\t"))
vals = {}
for r in rows:
    if r["value"] != "FAIL":
        vals.setdefault((r["client"], r["broker"]), {})[r["round"]] = float(r["value"])
def fmt(k):
    v = list(vals.get(k, {}).values())
    return f"{statistics.median(v):,.0f} [{min(v):,.0f}-{max(v):,.0f}]" if v else "FAIL"
def ratio(a, b):
    ra = [vals[a][k] / vals[b][k] for k in vals.get(a, {}) if k in vals.get(b, {}) and vals[b][k]]
    return f"{statistics.median(ra):.2f}x [{min(ra):.2f}-{max(ra):.2f}]" if ra else "n/a"
lines = ["| client | broker | connections/s, median [range] |", "|---|---|---:|"]
for k in [("A", "A"), ("B", "B"), ("B", "A"), ("A", "B")]:
    lines.append(f"| {k[0]} | {k[1]} | {fmt(k)} |")
lines += ["", "| ratio (per round) | median [range] |", "|---|---|",
          f"| B on both ends / A on both ends | {ratio(('B','B'), ('A','A'))} |",
          f"| B's client / A's client (A's broker) | {ratio(('B','A'), ('A','A'))} |",
          f"| B's broker / A's broker (A's client) | {ratio(('A','B'), ('A','A'))} |"]
open(f"{out}/summary.md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
