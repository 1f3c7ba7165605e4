#!/usr/bin/env bash
# Start alignment of sharded runs (issue 14): ROUNDS times, three shards of
# `wirebench echo -c 10 -n 30000` against one `wirebench serve echo`, all given
# `--start-at` 2 s ahead; prints each round's spread of measured_start_unix_ms (latest
# minus earliest, ms) and the median and range. Server pinned to CPU 0, the three
# shards to CPU 1 (what a busy generator host looks like). Raw results: OUT/.
# Usage: benchsuite/shards/start_spread.sh [OUT] (run under flock -x /work/locks/bench.lock).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
WB=${WB:-target/release/wirebench}
OUT=${1:-benchsuite/runs/$(date -u +%F)/shards}
ROUNDS=${ROUNDS:-5}
PORT=${PORT:-19531}
mkdir -p "$OUT"

taskset -c 0 "$WB" serve echo --listen 127.0.0.1:$PORT --threads 1 --stats 600s >"$OUT/server.txt" 2>&1 &
server=$!
trap 'kill -INT $server 2>/dev/null || true' EXIT
sleep 0.5

spreads=()
for r in $(seq 1 "$ROUNDS"); do
    at=$(( $(date +%s%3N) + 2000 ))
    pids=()
    for i in 0 1 2; do
        taskset -c 1 "$WB" echo 127.0.0.1:$PORT -t 1 -c 10 -n 30000 --shard $i/3 \
            --run-id spread-$r --start-at $at -q --json "$OUT/round$r-shard$i.json" \
            >"$OUT/round$r-shard$i.txt" 2>&1 &
        pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p"; done
    spread=$(python3 - "$OUT" "$r" <<'PY'
import json, sys
out, r = sys.argv[1], sys.argv[2]
s = [json.load(open(f"{out}/round{r}-shard{i}.json"))["shard"]["measured_start_unix_ms"] for i in range(3)]
print(max(s) - min(s))
PY
)
    echo "round $r: start_at $at, spread ${spread} ms"
    spreads+=("$spread")
done
printf '%s\n' "${spreads[@]}" | sort -n | awk '{v[NR]=$1} END {m=(NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2; printf "spread of measured starts over %d rounds: median %s ms, range %s-%s ms\n", NR, m, v[1], v[NR]}'
