#!/bin/sh
# Three echo shards against one `wirebench serve echo`, merged: the merged ok count
# against the server's own byte count (frames of 28 + SIZE bytes), and the merged
# p50/p99 against the shards' own. Usage: shards3.sh WIREBENCH OUTDIR [N_PER_SHARD]
# Server on CPU 0, generators on CPU 1, one after another (the merge is exact either
# way; side by side the three would share one CPU). Hold `flock -x` around it.
set -eu
WB=$1; OUT=$2; N=${3:-200000}; SIZE=64
mkdir -p "$OUT"
PORT=47419
taskset -c 0 "$WB" serve echo --threads 1 --listen 127.0.0.1:$PORT > "$OUT/serve.txt" 2>&1 &
SP=$!
sleep 0.5
for i in 0 1 2; do
  taskset -c 1 "$WB" echo 127.0.0.1:$PORT -n "$N" -c 8 -t 1 --size $SIZE --json "$OUT/shard-$i.json" -q > "$OUT/shard-$i.txt"
done
kill -TERM $SP; wait $SP || true
# Until --shard lands, each result is made a shard of run "bench" here, with the
# whole run's plan as its config (what --shard writes).
python3 - "$OUT" "$N" <<'PY'
import json, sys
out, n = sys.argv[1], int(sys.argv[2])
for i in range(3):
    p = f"{out}/shard-{i}.json"
    v = json.load(open(p))
    v["config"]["plan"] = {"type": "count", "requests": 3 * n}
    v["shard"] = {"index": i, "count": 3, "run_id": "bench", "start_at_unix_ms": None,
                  "measured_start_unix_ms": v["started_unix_ms"], "portion": {"requests": n}}
    json.dump(v, open(p, "w"))
PY
/usr/bin/time -f "merge wall %e s, max RSS %M KiB" "$WB" merge "$OUT"/shard-0.json "$OUT"/shard-1.json "$OUT"/shard-2.json -o "$OUT/merged.json" > "$OUT/merge.txt" 2>&1
cat "$OUT/merge.txt"
grep "final:" "$OUT/serve.txt"
python3 - "$OUT" $SIZE <<'PY'
import json, re, sys
out, size = sys.argv[1], int(sys.argv[2])
m = json.load(open(f"{out}/merged.json"))
line = [l for l in open(f"{out}/serve.txt") if "final:" in l][0]
bytes_in = int(re.search(r"bytes in ([\d,]+)", line).group(1).replace(",", ""))
frame = 28 + size
print(f"merged ok {m['totals']['ok']}, server frames {bytes_in // frame} (bytes in {bytes_in} / {frame}), equal: {m['totals']['ok'] * frame == bytes_in}")
for q in ("p50", "p99"):
    own = [json.load(open(f"{out}/shard-{i}.json"))["latency_us"][q] for i in range(3)]
    print(f"{q}: merged {m['latency_us'][q]} us, shards {own}, within: {min(own) <= m['latency_us'][q] <= max(own)}")
PY
