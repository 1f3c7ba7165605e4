#!/usr/bin/env bash
# Server user memory per idle connection: `wirebench serve PROTO --processes P`
# (CPU 0) holds N connections that `wirebench connect` (CPU 1) opens from SOURCE
# addresses and holds; connect reads the server workers' RSS (--server-pid) before
# and once all are up, and reports (after - before) / N. Idle: nothing is sent.
#
# Usage: bash benchsuite/memory/idle_server.sh   (run under flock -x)
# Knobs: N=100000 P=7 PROTO=echo ROUNDS=3 SOURCE=127.0.0.11-127.0.0.30 HOLD=2s
#        WIREBENCH=path OUT=benchsuite/runs/<date>/server-memory
# (ulimit -n is 20,000 per process here: P x 20,000 must exceed N, and so must the
# client's processes, which connect sizes itself.)
set -euo pipefail
N=${N:-100000}
P=${P:-7}
PROTO=${PROTO:-echo}
ROUNDS=${ROUNDS:-3}
SOURCE=${SOURCE:-127.0.0.11-127.0.0.30}
HOLD=${HOLD:-2s}
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/../.." && pwd)
WB=${WIREBENCH:-${CARGO_TARGET_DIR:-$REPO/target}/release/wirebench}
OUT=${OUT:-$REPO/benchsuite/runs/$(date +%F)/server-memory}
mkdir -p "$OUT"
PID=""
trap '[[ -n "$PID" ]] && kill -TERM "$PID" 2>/dev/null; wait 2>/dev/null || true' EXIT
printf 'round\tconnections\tserver_rss_before\tserver_rss_after\tbytes_per_conn\n' >"$OUT/raw.tsv"
for ((round = 1; round <= ROUNDS; round++)); do
    port=$((19500 + round))
    taskset -c 0 "$WB" serve "$PROTO" --listen "127.0.0.254:$port" --processes "$P" --threads 1 \
        >"$OUT/r$round.serve.stdout" 2>&1 &
    PID=$!
    pids=""
    for _ in $(seq 100); do
        pids=$(sed -n 's/^worker pids: //p' "$OUT/r$round.serve.stdout")
        [[ -n "$pids" ]] && break
        sleep 0.1
    done
    taskset -c 1 "$WB" connect "127.0.0.254:$port" -n "$N" --source "$SOURCE" --hold "$HOLD" \
        --server-pid "$pids" --json "$OUT/r$round.connect.json" -q >"$OUT/r$round.connect.stdout" 2>&1 || true
    kill -TERM "$PID" 2>/dev/null || true
    wait "$PID" 2>/dev/null || true
    PID=""
    python3 - "$OUT/r$round.connect.json" "$round" >>"$OUT/raw.tsv" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
def find(d, k):
    if isinstance(d, dict):
        if k in d:
            return d[k]
        for v in d.values():
            r = find(v, k)
            if r is not None:
                return r
    return None
held = find(j, "established")
print("\t".join(str(x) for x in (sys.argv[2], held, find(j, "server_rss_bytes_before"),
      find(j, "server_rss_bytes_after"), find(j, "server_rss_per_conn_bytes"))))
PY
    tail -n 1 "$OUT/raw.tsv" >&2
done
