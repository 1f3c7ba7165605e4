#!/usr/bin/env bash
# What nginx pays for waking its HTTP/2 client: against nginx (h2c, one process, CPU 0),
# h2load, `wirebench http --h2` and `wirebench http --h2 --coalesce off` (CPU 1), each
# -c 50 -m 10 -n N, ROUNDS rounds: each side's sleeps and wake-ups
# (benchsuite/lib/wakeups.sh) and nginx's user and system time per request
# (/proc/PID/stat, before and after).
#
# Usage: WIREBENCH=target/release/wirebench flock -x /work/locks/bench.lock bash benchsuite/http2/wakeups.sh
# Knobs: ROUNDS=2 N=300000 BASE_PORT=19400 OUT=benchsuite/runs/<date>/http2-wakeups
set -euo pipefail
# shellcheck source=../lib/nginx.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/nginx.sh" http2-wakeups
knobs ROUNDS=2 N=300000 BASE_PORT=19400
WB=${WIREBENCH:-${CARGO_TARGET_DIR:-$REPO/target}/release/wirebench}
need_tools h2load taskset perf
# shellcheck source=../lib/wakeups.sh
source "$REPO/benchsuite/lib/wakeups.sh"
PORT=$BASE_PORT
TSV=$OUT/counts.tsv
printf 'round\t%s\tsrv_user_ticks\tsrv_sys_ticks\n' "$WAKE_HEADER" >"$TSV"
ticks() { awk '{print $14, $15}' /proc/"$1"/stat; }
for ((round = 1; round <= ROUNDS; round++)); do
    for gen in h2load wirebench wirebench-off; do
        PORT=$((PORT + 1))
        start_nginx_h2c
        url="http://127.0.0.1:$PORT/"
        case $gen in
        h2load) cmd=(h2load -t 1 -n "$N" -c 50 -m 10 "$url") ;;
        wirebench) cmd=("$WB" http --h2 "$url" -t 1 -c 50 --max-streams 10 -n "$N" -q) ;;
        wirebench-off) cmd=("$WB" http --h2 "$url" -t 1 -c 50 --max-streams 10 -n "$N" -q --coalesce off) ;;
        esac
        read -r u0 s0 < <(ticks "$PID")
        row=$(count_wakeups "$OUT" "r${round}_$gen" "$PID" "echo $N" -- taskset -c 1 "${cmd[@]}")
        read -r u1 s1 < <(ticks "$PID")
        printf '%s\t%s\t%s\t%s\n' "$round" "$row" $((u1 - u0)) $((s1 - s0)) >>"$TSV"
        stop_nginx
    done
done
python3 - "$TSV" <<'PY' | tee "$OUT/summary.md"
import csv, os, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
hz = os.sysconf("SC_CLK_TCK")
print("| generator | round | client sleeps / request | server waits / request | IPIs / request | nginx user us / request | nginx system us / request |")
print("|---|---|---|---|---|---|---|")
for r in rows:
    n = int(r["units"])
    print(f"| {r['tag'].split('_', 1)[1]} | {r['round']} | {int(r['cli_vcsw']) / n:.3f} | {int(r['srv_waits']) / n:.3f} | "
          f"{int(r['ipis']) / n:.3f} | {int(r['srv_user_ticks']) * 1e6 / hz / n:.2f} | {int(r['srv_sys_ticks']) * 1e6 / hz / n:.2f} |")
PY
