#!/usr/bin/env bash
# How often each HTTP generator sleeps per request, and what that costs and gives: for
# each binary in $CLIENTS (`wirebench http -t 1`, CPU 1) against one nginx (CPU 0) per
# point, its voluntary context switches (sleeps) and involuntary ones per request
# (/usr/bin/time %w, %c), its CPU microseconds per request, req/s and p50/p99 latency.
# A sleep of the generator costs nginx a wake-up (~18.5 us on this VM: "Who pays for a
# sleep" in BENCHMARKS.md#how-these-figures-are-taken), so this is what a change of the
# wait policy moves.
#
# Usage: CLIENTS="main=/work/bin/wb-main-80104a0 new=target/release/wirebench" \
#        flock -x /work/locks/gate.lock flock -x /work/locks/bench.lock bash benchsuite/http/client_sleeps.sh
# Knobs: POINTS="log:50 log:200 nolog:50" DURATION=3 BASE_PORT=18900 OUT=benchsuite/runs/<date>/http-client-sleeps
set -euo pipefail
# shellcheck source=../lib/nginx.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/nginx.sh" http-client-sleeps
knobs POINTS="log:50 log:200 nolog:50" DURATION=3 BASE_PORT=18900
need_tools taskset python3 /usr/bin/time
[[ -n ${CLIENTS:-} ]] || { echo "!! CLIENTS=\"name=BIN ...\" is required" >&2; exit 2; }
PORT=$BASE_PORT
for point in $POINTS; do
    PORT=$((PORT + 1))
    start_nginx "${point%%:*}"
    for spec in $CLIENTS; do
        run=$OUT/${spec%%=*}-${point/:/_}
        /usr/bin/time -f '%U %S %w %c' -o "$run.time" taskset -c 1 "${spec#*=}" http "http://127.0.0.1:$PORT/" \
            -t 1 -c "${point#*:}" -d "${DURATION}s" --quiet --json "$run.json" >/dev/null 2>&1 || true
        python3 - "$run" "$point" "${spec%%=*}" <<'PY'
import json, sys
run, point, name = sys.argv[1:]
j = json.load(open(run + ".json"))
user, system, sleeps, preempted = open(run + ".time").read().split()
n = j["totals"]["ok"] + j["warmup"]["ok"]
lat = j["latency_us"]
print(f"{point}\t{name}\treq/s {j['throughput']['msgs_per_s']:.0f}\tsleeps/req {int(sleeps) / n:.4f}"
      f"\tinvol/req {int(preempted) / n:.4f}\tcpu us/req {(float(user) + float(system)) * 1e6 / n:.2f}"
      f"\tp50 {lat['p50']} p99 {lat['p99']}")
PY
    done
    stop_nginx
done
