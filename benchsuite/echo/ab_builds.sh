#!/usr/bin/env bash
# Before/after of wirebench builds against the C echo pair: run.sh one round at a
# time per build, the builds alternating (before, after, before, ...), each round in
# its own exclusive hold taken through the gate (builds queue while it runs, and no
# hold lasts more than ~1 minute). Then, per round, every build's ratios to the C
# pair of the same round: client b/a in msgs/s and msgs per generator CPU-second,
# server c/a in msgs/s and msgs per server CPU-second; median [range] over rounds.
#
# Usage: BUILDS="before=/path/wirebench after=/path/wirebench" bash benchsuite/echo/ab_builds.sh
# Knobs: ROUNDS=3 DURATION=3 WARMUP=1 OUT=benchsuite/runs/<date>/echo-builds
#        GATE=/work/locks/gate.lock LOCK=/work/locks/bench.lock
set -euo pipefail
ROUNDS=${ROUNDS:-3}
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/../.." && pwd)
OUT=${OUT:-$REPO/benchsuite/runs/$(date +%F)/echo-builds}
GATE=${GATE:-/work/locks/gate.lock}
LOCK=${LOCK:-/work/locks/bench.lock}
mkdir -p "$OUT"
for ((round = 1; round <= ROUNDS; round++)); do
    for spec in $BUILDS; do
        name=${spec%%=*} bin=${spec#*=}
        echo "== round $round: $name" >&2
        flock -x "$GATE" flock -x "$LOCK" env ROUNDS=1 DURATION="${DURATION:-3}" \
            WARMUP="${WARMUP:-1}" WIREBENCH="$bin" OUT="$OUT/$name-r$round" \
            bash "$SCRIPT_DIR/run.sh" >"$OUT/$name-r$round.log" 2>&1
    done
done
python3 - "$OUT" "$ROUNDS" $BUILDS <<'PY' | tee "$OUT/summary.md"
import csv, statistics, sys
out, rounds, builds = sys.argv[1], int(sys.argv[2]), [b.split("=")[0] for b in sys.argv[3:]]
def rows(path):
    try:
        return list(csv.DictReader(open(path), delimiter="\t"))
    except OSError:
        return []
def f(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None
ratios = {}  # (build, point, figure) -> per-round ratios
for b in builds:
    for r in range(1, rounds + 1):
        d = f"{out}/{b}-r{r}"
        m = {(x["point"], x["what"]): x for x in rows(f"{d}/raw.tsv")}
        s = {(x["point"], x["what"]): x for x in rows(f"{d}/server_cpu.tsv")}
        for point in ("10x1", "100x16"):
            a, bb, c = m.get((point, "a")), m.get((point, "b")), m.get((point, "c"))
            def per_cpu(x):  # msgs per generator CPU-second
                mps, cpu, wall = f(x["msgs_per_s"]), f(x["cpu_s"]), f(x["wall_s"])
                return mps / (cpu / wall) if mps and cpu and wall else None
            def per_srv(what):  # msgs per server CPU-second
                x, y = m.get((point, what)), s.get((point, what))
                if not x or not y:
                    return None
                mps, cpu, wall = f(x["msgs_per_s"]), f(y["server_cpu_s"]), f(y["wall_s"])
                return mps / (cpu / wall) if mps and cpu and wall else None
            pairs = {
                "client msgs/s (b/a)": (f(bb["msgs_per_s"]) if bb else None, f(a["msgs_per_s"]) if a else None),
                "client msgs per client CPU-s (b/a)": (per_cpu(bb) if bb else None, per_cpu(a) if a else None),
                "server msgs/s (c/a)": (f(c["msgs_per_s"]) if c else None, f(a["msgs_per_s"]) if a else None),
                "server msgs per server CPU-s (c/a)": (per_srv("c"), per_srv("a")),
            }
            for fig, (num, den) in pairs.items():
                if num and den:
                    ratios.setdefault((b, point, fig), []).append(num / den)
print("| point | figure | " + " | ".join(builds) + " |")
print("|---|---|" + "---|" * len(builds))
for point in ("10x1", "100x16"):
    for fig in ("client msgs/s (b/a)", "client msgs per client CPU-s (b/a)",
                "server msgs/s (c/a)", "server msgs per server CPU-s (c/a)"):
        cells = []
        for b in builds:
            q = ratios.get((b, point, fig), [])
            cells.append(f"{statistics.median(q):.3f}x [{min(q):.3f}-{max(q):.3f}] (n={len(q)})" if q else "n/a")
        print(f"| {point} | {fig} | " + " | ".join(cells) + " |")
PY
