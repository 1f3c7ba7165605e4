#!/usr/bin/env bash
# prof.sh OUT BIN... : perf record (cpu-clock, 100us period) of nginx nolog and each serve http; ns/request per symbol
set -euo pipefail
cd /work/wt/srvcpu   # (run as benchsuite/http/prof_tmp.sh, not committed: cd "$(dirname "${BASH_SOURCE[0]}")/../..")
source benchsuite/lib/nginx.sh prof
OUT=$1; shift; mkdir -p $OUT
PORT=18750
prof() {
  perf record -q -e cpu-clock -c 100000 -o "$WORK/$1.data" -p "$PID" -- sleep 5 2>/dev/null &
  local pp=$!; sleep 0.3
  taskset -c 1 wrk -t1 -c${C:-50} -d4s "http://127.0.0.1:$PORT/" > $OUT/$1.wrk.txt 2>&1 || true
  wait $pp || true
  perf report -i "$WORK/$1.data" -n --no-children --sort sym --stdio -q 2>/dev/null | grep -E '^ +[0-9.]+%' > $OUT/$1.syms.txt || true
}
PORT=$((PORT+1)); start_nginx nolog; prof nginx; stop_nginx
for b in "$@"; do PORT=$((PORT+1)); taskset -c 0 ${b#*=} serve http --listen 127.0.0.1:$PORT --threads 1 >/dev/null 2>&1 & PID=$!; wait_port $PORT; prof ${b%%=*}; stop_server; done
