#!/usr/bin/env bash
# A/B of echo clients against the C server: per round and point, the C client and
# each binary in $CLIENTS (`wirebench echo -t 1`, CPU 1) load a C server pinned to
# CPU 0, back to back, so drift hits all alike; 64-byte messages at 10x1 and 100x16.
# Each run gets a fresh C server, and the order changes every round (rotated by the
# round, reversed every other round; the C client counts as one): with one server
# per point and a fixed order, the client right after the C client measured up to
# ~9% less than in another place (2026-11-23; raw runs gencpu-echo-* in git history).
# With ROUNDS a multiple of twice the number of clients, each takes each place, and
# follows each other client, equally often.
# Ratios are per round: each client against the C client, and against the first
# binary, in msgs/s and (wirebench only) in CPU microseconds per message.
#
# Usage: CLIENTS="A=path/to/wirebench B=other/wirebench" bash benchsuite/echo/ab_clients.sh
#        (run under flock -x)
# Knobs: ROUNDS=3 DURATION=3 WARMUP=1 POINTS="10x1 100x16" OUT=benchsuite/runs/<date>/echo-ab-clients BASE_PORT=9600
set -euo pipefail
# shellcheck source=../lib/c_echo.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/c_echo.sh" echo-ab-clients
knobs ROUNDS=3 DURATION=3 WARMUP=1 POINTS="10x1 100x16" BASE_PORT=9600
PORT=$BASE_PORT
RAW=$OUT/raw.tsv
printf 'round\tpoint\tclient\tmsgs_per_s\tcpu_us_per_msg\n' >"$RAW"
for ((round = 1; round <= ROUNDS; round++)); do
    for point in $POINTS; do
        conns=${point%x*} depth=${point#*x}
        order=(C=c $CLIENTS)
        n=${#order[@]}
        for ((k = 0; k < n; k++)); do
            # Rotated by the round, and reversed every other round, so each client
            # takes each place, and follows each other client, equally often.
            j=$(((round % 2 == 0 ? n - 1 - k : k) + round - 1))
            spec=${order[j % n]}
            name=${spec%%=*} bin=${spec#*=}
            start_c_server
            if [[ $spec == C=c ]]; then
                line=$(taskset -c 1 "$BUILD/c_echo_client" 127.0.0.1 "$PORT" "$conns" "$depth" 64 \
                    "$DURATION" "$WARMUP" 2>/dev/null || echo "msgs_per_s=FAIL")
                mps=$(sed -n 's/^msgs_per_s=\([0-9.A-Z]*\).*/\1/p' <<<"$line")
                printf '%s\t%s\tC\t%s\t\n' "$round" "$point" "$mps" >>"$RAW"
                stop_server
                continue
            fi
            json=$OUT/r${round}_${point}_$name.json
            # 36-byte payload + the 28-byte frame header = 64 bytes on the wire.
            if taskset -c 1 "$bin" echo "127.0.0.1:$PORT" -t 1 -c "$conns" --pipeline "$depth" \
                --size 36 -d "${DURATION}s" --warmup "${WARMUP}s" --quiet --json "$json" \
                >/dev/null 2>"$OUT/r${round}_${point}_$name.stderr"; then
                python3 - "$json" "$round" "$point" "$name" >>"$RAW" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
print("\t".join([sys.argv[2], sys.argv[3], sys.argv[4], str(j["throughput"]["msgs_per_s"]),
                 str(j["cpu"]["client_us_per_msg"])]))
PY
            else
                printf '%s\t%s\t%s\tFAIL\t\n' "$round" "$point" "$name" >>"$RAW"
            fi
            stop_server
        done
    done
done
PYTHONPATH="$REPO/benchsuite/lib" python3 - "$RAW" "$OUT/summary.md" <<'PY'
import csv, statistics, sys
from ratio_cells import number, ratio_cell
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
v = {(r["round"], r["point"], r["client"]): (number(r["msgs_per_s"]), number(r["cpu_us_per_msg"] or "x")) for r in rows}
clients = list(dict.fromkeys(r["client"] for r in rows))
first = clients[1] if len(clients) > 1 else None
rounds = sorted({r["round"] for r in rows}, key=int)
# The points that ran ($POINTS), in their order: not a fixed list.
points = list(dict.fromkeys(r["point"] for r in rows))
lines = [f"| point | client | msgs/s median [range] | / C msgs/s, per round | / {first} msgs/s | {first} CPU per msg / this |",
         "|---|---|---|---|---|---|"]
for point in points:
    for c in clients:
        m = [v[(r, point, c)][0] for r in rounds if v.get((r, point, c), (None,))[0]]
        q = [v[(r, point, c)][0] / v[(r, point, "C")][0] for r in rounds
             if v.get((r, point, c), (None,))[0] and v.get((r, point, "C"), (None,))[0]]
        s = [v[(r, point, c)][0] / v[(r, point, first)][0] for r in rounds
             if c != "C" and v.get((r, point, c), (None,))[0] and v.get((r, point, first), (None,))[0]]
        u = [v[(r, point, first)][1] / v[(r, point, c)][1] for r in rounds
             if c != "C" and v.get((r, point, c), (None, None))[1] and v.get((r, point, first), (None, None))[1]]
        if m:
            lines.append(f"| {point} | {c} | {statistics.median(m):,.0f} [{min(m):,.0f}-{max(m):,.0f}] | "
                         f"{ratio_cell(q)} | {ratio_cell(s)} | {ratio_cell(u)} |")
text = "\n".join(lines) + "\n"
open(sys.argv[2], "w").write(text)
print(text, end="")
PY
