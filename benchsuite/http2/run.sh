#!/usr/bin/env bash
# `wirebench serve http` (h2c) against nginx (h2c, prior knowledge), both driven by
# h2load: requests per server CPU-second. The server on CPU 0 (one thread; nginx one
# worker, no master), h2load on CPU 1; ROUNDS rounds, the order swapped every round;
# the server's CPU is utime + stime from /proc/PID/stat around h2load's run, and each
# run's count is h2load's own succeeded (held equal to wirebench's own `requests`).
#
# Usage: flock -x /work/locks/bench.lock bash benchsuite/http2/run.sh
# Knobs: ROUNDS=3 N=300000 C=50 M=10 PATH_=/ BASE_PORT=19100
#        WIREBENCH=path (default target/release/wirebench) OUT=benchsuite/runs/<date>/http2
set -euo pipefail
# shellcheck source=../lib/nginx.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/nginx.sh" http2
knobs ROUNDS=3 N=300000 C=50 M=10 PATH_=/ BASE_PORT=19100
WB=${WIREBENCH:-${CARGO_TARGET_DIR:-$REPO/target}/release/wirebench}
need_tools h2load taskset python3
PORT=$BASE_PORT
TICK=$(getconf CLK_TCK)

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

start_wirebench() {
    taskset -c 0 "$WB" serve http --listen "127.0.0.1:$PORT" --threads 1 >"$OUT/$1.serve.stdout" 2>&1 &
    PID=$!
    wait_port "$PORT" || { echo "!! serve http did not start" >&2; exit 1; }
}

measure() { # ROUND SERVER
    local tag=r$1_$2
    PORT=$((PORT + 1))
    if [[ $2 == nginx ]]; then start_nginx_h2c; else start_wirebench "$tag"; fi
    local t0 t1
    t0=$(ticks "$PID")
    taskset -c 1 h2load -n "$N" -c "$C" -m "$M" "http://127.0.0.1:$PORT$PATH_" >"$OUT/$tag.h2load" 2>&1
    t1=$(ticks "$PID")
    if [[ $2 == nginx ]]; then stop_nginx; else stop_server TERM; fi
    python3 - "$OUT/$tag.h2load" "$1" "$2" "$t0" "$t1" "$TICK" "$OUT/$tag.serve.stdout" >>"$OUT/raw.tsv" <<'PY'
import re, sys
out, rnd, server, t0, t1, tick, serve = sys.argv[1:]
text = open(out).read()
ok = int(re.search(r"(\d+) succeeded", text).group(1))
rps = float(re.search(r"finished in [\d.]+m?s, ([\d.]+) req/s", text).group(1))
cpu = (int(t1) - int(t0)) / int(tick)
if server == "wirebench":
    final = [l for l in open(serve) if "final: " in l][-1]
    served = int(re.search(r" requests ([\d,]+)", final).group(1).replace(",", ""))
    assert served == ok, f"serve http answered {served}, h2load counted {ok}"
print(f"{rnd}\t{server}\t{ok}\t{cpu:.2f}\t{ok / cpu:.0f}\t{rps:.0f}")
PY
    tail -n 1 "$OUT/raw.tsv" >&2
}

printf 'round\tserver\trequests\tserver_cpu_s\treq_per_server_cpu_s\treq_per_s\n' >"$OUT/raw.tsv"
for ((round = 1; round <= ROUNDS; round++)); do
    if ((round % 2)); then order="wirebench nginx"; else order="nginx wirebench"; fi
    for server in $order; do measure "$round" "$server"; done
done
python3 - "$OUT/raw.tsv" >"$OUT/summary.txt" <<'PY'
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])][1:]
by = {}
for rnd, server, _, _, per_cpu, rps in rows:
    by.setdefault(rnd, {})[server] = (float(per_cpu), float(rps))
cpu = [r["wirebench"][0] / r["nginx"][0] for r in by.values()]
rps = [r["wirebench"][1] / r["nginx"][1] for r in by.values()]
print(f"requests per server CPU-second, serve http / nginx (h2c): median {statistics.median(cpu):.3f}x "
      f"range {min(cpu):.3f}-{max(cpu):.3f} over {len(cpu)} rounds: {' '.join(f'{x:.3f}' for x in cpu)}")
print(f"req/s, serve http / nginx (h2c): median {statistics.median(rps):.3f}x "
      f"range {min(rps):.3f}-{max(rps):.3f}")
PY
cat "$OUT/summary.txt"
