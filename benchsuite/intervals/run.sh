#!/usr/bin/env bash
# Per-interval histograms, what they cost (issue 32):
#  1. memory: the generator's peak RSS (VmHWM, the result's client_process.peak_rss_bytes)
#     over a 1-hour-equivalent run (3,600 intervals: --interval 10ms for 36 s, with
#     --hlog) against a 10-interval run of the same 36 s (--interval 3.6s, with
#     --hlog), ROUNDS rounds interleaved; the log's bytes on disk are reported beside.
#  2. rate: the load's rate with this binary (NEW) against the one before per-interval
#     histograms (OLD), echo 100 x 16 and http 50 x 1, each against `OLD serve echo|http`
#     (server pinned to CPU 0, generator to CPU 1), ROUNDS rounds, order alternating.
# Usage: flock -x /work/locks/bench.lock bash benchsuite/intervals/run.sh OLD NEW
# Knobs: ROUNDS=3 SECS=5 OUT=benchsuite/runs/<date>/intervals
set -euo pipefail
OLD=$1
NEW=$2
ROUNDS=${ROUNDS:-3}
SECS=${SECS:-5}
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/../.." && pwd)
OUT=${OUT:-$REPO/benchsuite/runs/$(date +%F)/intervals}
mkdir -p "$OUT"
SERVER_PID=""
stop_server() { [[ -n "$SERVER_PID" ]] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null; SERVER_PID=""; }
trap stop_server EXIT
field() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }

echo -e "round\tintervals\tpeak_rss_bytes\trows\thlog_bytes" > "$OUT/memory.tsv"
for r in $(seq 1 "$ROUNDS"); do
    for iv in 10ms 3.6s; do
        j="$OUT/memory-$iv-r$r.json"; log="$OUT/memory-$iv-r$r.hlog"
        taskset -c 0,1 "$NEW" echo -t 1 -c 16 --pipeline 4 -d 36s --interval "$iv" \
            --hlog "$log" --json "$j" -q > "$OUT/memory-$iv-r$r.txt" 2>&1
        echo -e "$r\t$iv\t$(field "$j" "j['client_process']['peak_rss_bytes']")\t$(field "$j" "len(j['intervals'])")\t$(stat -c %s "$log")" >> "$OUT/memory.tsv"
        rm -f "$log"   # its size is recorded; the bytes themselves are no result
    done
done

echo -e "round\tload\tbinary\tper_s" > "$OUT/rate.tsv"
for load in echo http; do
    port=$((21000 + RANDOM % 2000))
    taskset -c 0 "$OLD" serve "$load" --listen "127.0.0.1:$port" --threads 1 > "$OUT/serve-$load.txt" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
    if [[ $load == echo ]]; then target=127.0.0.1:$port; args=(-c 100 --pipeline 16); else target=http://127.0.0.1:$port/; args=(-c 50); fi
    for r in $(seq 1 "$ROUNDS"); do
        if (( r % 2 )); then order=("old:$OLD" "new:$NEW"); else order=("new:$NEW" "old:$OLD"); fi
        for ob in "${order[@]}"; do
            name=${ob%%:*}; bin=${ob#*:}
            j="$OUT/rate-$load-$name-r$r.json"
            taskset -c 1 "$bin" "$load" "$target" -t 1 "${args[@]}" -d "${SECS}s" --json "$j" -q > "$OUT/rate-$load-$name-r$r.txt" 2>&1
            echo -e "$r\t$load\t$name\t$(field "$j" "j['throughput']['msgs_per_s']")" >> "$OUT/rate.tsv"
        done
    done
    stop_server
done
cat "$OUT/memory.tsv" "$OUT/rate.tsv"
