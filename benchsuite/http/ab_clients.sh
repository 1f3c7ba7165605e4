#!/usr/bin/env bash
# A/B of HTTP generators against nginx (one process; access log off, or on): per round
# and point, one nginx pinned to CPU 0 serves wrk -t1, then each binary in $CLIENTS
# (`wirebench http -t1`, CPU 1), back to back, so drift hits all alike. Ratios are per
# round: each binary against wrk and against the first binary, in req/s and in
# requests per generator CPU-second (user+sys of the generator, /usr/bin/time).
#
# Usage: CLIENTS="new=path/to/wirebench main=/work/bin/wb-main-51ec707" \
#        flock -x /work/locks/gate.lock flock -x /work/locks/bench.lock bash benchsuite/http/ab_clients.sh
# Knobs: ROUNDS=3 DURATION=3 POINTS="nolog:50 log:50" BASE_PORT=18500 OUT=benchsuite/runs/<date>/http-ab-clients
set -euo pipefail
# shellcheck source=../lib/nginx.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/nginx.sh" http-ab-clients
knobs ROUNDS=3 DURATION=3 POINTS="nolog:50 log:50" BASE_PORT=18500
cpu_s() { awk '{print $1 + $2}' "$1"; }
RAW=$OUT/raw.tsv
printf 'round\tpoint\tclient\treq_per_s\trequests\tcpu_s\n' >"$RAW"
PORT=$BASE_PORT
for ((round = 1; round <= ROUNDS; round++)); do
    for point in $POINTS; do
        variant=${point%%:*} conns=${point#*:}
        PORT=$((PORT + 1))
        start_nginx "$variant"
        tag=r${round}_${point/:/_}_wrk
        /usr/bin/time -f '%U %S' -o "$OUT/$tag.time" taskset -c 1 wrk -t1 -c"$conns" -d"${DURATION}s" \
            "http://127.0.0.1:$PORT/" >"$OUT/$tag.txt" 2>&1 || true
        n=$(sed -n 's/^ *\([0-9]*\) requests in .*/\1/p' "$OUT/$tag.txt")
        rps=$(sed -n 's/^Requests\/sec: *\([0-9.]*\).*/\1/p' "$OUT/$tag.txt")
        printf '%s\t%s\twrk\t%s\t%s\t%s\n' "$round" "$point" "${rps:-FAIL}" "${n:-0}" "$(cpu_s "$OUT/$tag.time")" >>"$RAW"
        for spec in $CLIENTS; do
            name=${spec%%=*} bin=${spec#*=}
            tag=r${round}_${point/:/_}_$name
            /usr/bin/time -f '%U %S' -o "$OUT/$tag.time" taskset -c 1 "$bin" http "http://127.0.0.1:$PORT/" \
                -t 1 -c "$conns" -d "${DURATION}s" --quiet --json "$OUT/$tag.json" >/dev/null 2>"$OUT/$tag.stderr" || true
            read -r rps n < <(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["throughput"]["msgs_per_s"], j["totals"]["ok"] + j["warmup"]["ok"])' "$OUT/$tag.json" 2>/dev/null || echo "FAIL 0")
            printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$point" "$name" "$rps" "$n" "$(cpu_s "$OUT/$tag.time")" >>"$RAW"
        done
        stop_nginx
    done
done
PYTHONPATH="$REPO/benchsuite/lib" python3 - "$RAW" <<'PY' | tee "$OUT/summary.md"
import csv, sys
from ratio_cells import number, ratio_cell
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
v = {(r["round"], r["point"], r["client"]): (number(r["req_per_s"]), number(r["requests"]), number(r["cpu_s"])) for r in rows}
clients = [c for c in dict.fromkeys(r["client"] for r in rows) if c != "wrk"]
rounds = sorted({r["round"] for r in rows}, key=int)
points = list(dict.fromkeys(r["point"] for r in rows))
def per_cpu(t):
    return t[1] / t[2] if t and t[1] and t[2] else None
print(f"| nginx:conns | client | req/s / wrk | per CPU-s / wrk | req/s / {clients[0]} | per CPU-s / {clients[0]} |")
print("|---|---|---|---|---|---|")
for p in points:
    for c in clients:
        g = lambda r, k: v.get((r, p, k))
        rq = [g(r, c)[0] / g(r, "wrk")[0] if g(r, c)[0] and g(r, "wrk")[0] else None for r in rounds]
        cq = [per_cpu(g(r, c)) / per_cpu(g(r, "wrk")) if per_cpu(g(r, c)) and per_cpu(g(r, "wrk")) else None for r in rounds]
        ra = [g(r, c)[0] / g(r, clients[0])[0] if g(r, c)[0] and g(r, clients[0])[0] else None for r in rounds]
        ca = [per_cpu(g(r, c)) / per_cpu(g(r, clients[0])) if per_cpu(g(r, c)) and per_cpu(g(r, clients[0])) else None for r in rounds]
        print(f"| {p} | {c} | {ratio_cell(rq)} | {ratio_cell(cq)} | {ratio_cell(ra)} | {ratio_cell(ca)} |")
PY
