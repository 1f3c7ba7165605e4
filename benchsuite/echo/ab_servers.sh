#!/usr/bin/env bash
# A/B of echo servers under the C client: each binary in $SERVERS runs `serve echo
# --threads 1` pinned to CPU 0, the C client (c_echo_client.c) on CPU 1, 64-byte
# messages, at 10x1 and 100x16 (connections x in flight); rounds interleave the
# servers so drift hits all alike. Ratios are per round, against the C server: of
# msgs/s, and of messages per server CPU-second (the server's user+system time from
# /proc/PID/stat across the client's run, warm-up included: with WARMUP=0 the client's
# count and the server's CPU cover the same seconds).
#
# Usage: SERVERS="A=path/to/wirebench B=other/wirebench" bash benchsuite/echo/ab_servers.sh
#        (the C server is always measured too, as "C"; run under flock -x)
# Knobs: ROUNDS=3 DURATION=5 WARMUP=1 OUT=benchsuite/runs/<date>/echo-ab BASE_PORT=9400
set -euo pipefail
# shellcheck source=../lib/c_echo.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/c_echo.sh" echo-ab
knobs ROUNDS=3 DURATION=5 WARMUP=1 BASE_PORT=9400
PORT=$BASE_PORT
RAW=$OUT/raw.tsv
printf 'round\tpoint\tserver\tmsgs_per_s\tmessages\tserver_cpu_s\n' >"$RAW"
TICK=$(getconf CLK_TCK)
ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
for ((round = 1; round <= ROUNDS; round++)); do
    for point in 10x1 100x16; do
        for spec in "C=c" $SERVERS; do
            name=${spec%%=*} bin=${spec#*=}
            PORT=$((PORT + 1))
            if [[ $bin == c ]]; then
                taskset -c 0 "$BUILD/c_echo_server" 127.0.0.1 "$PORT" 2>/dev/null &
            else
                taskset -c 0 "$bin" serve echo --listen "127.0.0.1:$PORT" --threads 1 >/dev/null 2>&1 &
            fi
            PID=$!
            wait_port "$PORT"
            t0=$(ticks "$PID")
            line=$(taskset -c 1 "$BUILD/c_echo_client" 127.0.0.1 "$PORT" "${point%x*}" "${point#*x}" 64 \
                "$DURATION" "$WARMUP" 2>/dev/null || echo "msgs_per_s=FAIL")
            cpu=$(python3 -c "print(f'{($(ticks "$PID") - $t0) / $TICK:.2f}')")
            stop_server
            mps=$(sed -n 's/^msgs_per_s=\([0-9.A-Z]*\).*/\1/p' <<<"$line")
            n=$(sed -n 's/.* messages=\([0-9]*\).*/\1/p' <<<"$line")
            printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$point" "$name" "$mps" "${n:-0}" "$cpu" >>"$RAW"
            echo "r$round $point $name msgs/s=$mps messages=${n:-0} server_cpu_s=$cpu" >&2
        done
    done
done
python3 - "$RAW" "$OUT/summary.md" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
v = {(r["round"], r["point"], r["server"]): float(r["msgs_per_s"]) for r in rows if r["msgs_per_s"] not in ("", "FAIL")}
# Messages per server CPU-second: the client's count over the server's CPU time.
pc = {(r["round"], r["point"], r["server"]): float(r["messages"]) / float(r["server_cpu_s"])
      for r in rows if r["msgs_per_s"] not in ("", "FAIL") and float(r["server_cpu_s"] or 0) > 0}
servers = list(dict.fromkeys(r["server"] for r in rows))
rounds = sorted({r["round"] for r in rows}, key=int)
def rng(x, fmt):
    return f"{statistics.median(x):{fmt}} [{min(x):{fmt}}-{max(x):{fmt}}]"
lines = ["| point | server | msgs/s median [range] | / C msgs/s, per round | msgs per server CPU-s | / C per CPU-s, per round |",
         "|---|---|---|---|---|---|"]
for point in ("10x1", "100x16"):
    for s in servers:
        m = [v[(r, point, s)] for r in rounds if (r, point, s) in v]
        q = [v[(r, point, s)] / v[(r, point, "C")] for r in rounds if (r, point, s) in v and (r, point, "C") in v]
        c = [pc[(r, point, s)] for r in rounds if (r, point, s) in pc]
        cq = [pc[(r, point, s)] / pc[(r, point, "C")] for r in rounds if (r, point, s) in pc and (r, point, "C") in pc]
        if m:
            lines.append(f"| {point} | {s} | {rng(m, ',.0f')} | {rng(q, '.3f')}x | "
                         + (f"{rng(c, ',.0f')} | {rng(cq, '.3f')}x |" if cq else "| |"))
text = "\n".join(lines) + "\n"
open(sys.argv[2], "w").write(text)
print(text, end="")
PY
