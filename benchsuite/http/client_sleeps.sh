#!/usr/bin/env bash
# Sleeps (voluntary context switches, /usr/bin/time %w), CPU and latency per request of each
# binary in $CLIENTS (`wirebench http -t1 -d 3s`, CPU 1) against one nginx (CPU 0) per point.
# Usage: CLIENTS="a=bin b=bin" flock -x gate flock -x bench bash benchsuite/http/client_sleeps.sh
# Knobs: BASE_PORT=18900 OUT=benchsuite/runs/<date>/http-client-sleeps
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/nginx.sh" http-client-sleeps
knobs BASE_PORT=18900
PORT=$BASE_PORT
for point in log:50 log:200 nolog:50; do
  PORT=$((PORT+1)); start_nginx "${point%%:*}"; c=${point#*:}
  for spec in $CLIENTS; do name=${spec%%=*} bin=${spec#*=}
    /usr/bin/time -f '%U %S %w %c' -o "$OUT/$name-${point/:/_}.time" taskset -c 1 "$bin" http "http://127.0.0.1:$PORT/" -t 1 -c "$c" -d 3s --quiet --json "$OUT/$name-${point/:/_}.json" >/dev/null 2>&1 || true
    python3 - "$OUT/$name-${point/:/_}" "$point" "$name" <<'PY'
import json,sys
j=json.load(open(sys.argv[1]+'.json')); u,s,w,c=open(sys.argv[1]+'.time').read().split()
n=j['totals']['ok']+j['warmup']['ok']; L=j['latency_us']
print(f"{sys.argv[2]}\t{sys.argv[3]}\treq/s {j['throughput']['msgs_per_s']:.0f}\tsleeps/req {int(w)/n:.4f}\tinvol/req {int(c)/n:.4f}\tcpu us/req {(float(u)+float(s))*1e6/n:.2f}\tp50 {L['p50']} p99 {L['p99']}")
PY
  done; stop_nginx; done
