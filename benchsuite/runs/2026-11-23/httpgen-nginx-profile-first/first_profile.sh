#!/usr/bin/env bash
# perf profile of nginx (log) under wrk and under wirebench http, c=50, 3 s each.
set -euo pipefail
D=/tmp/ngxprof; WB=${WB:-/work/bin/wb-merged-02f604c}
REPO=/work/wt/httpgen
run() { # NAME PORT CMD...
  local name=$1 port=$2; shift 2
  local dir=$D/ngx-$port; mkdir -p $dir
  sed -e "s#@PREFIX@#$dir#g" -e "s#@PORT@#$port#g" $REPO/benchsuite/http/nginx.conf.in > $dir/nginx.conf
  sed -i "s#access_log off;#access_log $dir/access.log;#" $dir/nginx.conf
  taskset -c 0 /usr/sbin/nginx -c $dir/nginx.conf -p $dir/ 2>/dev/null & local pid=$!
  sleep 0.5
  perf record -q -e cpu-clock -g -p $pid -o $D/$name.data >/dev/null 2>&1 & local rp=$!
  sleep 0.2
  taskset -c 1 "$@" http://127.0.0.1:$port/ > $D/$name.out 2>&1 || true
  kill -INT $rp; wait $rp || true
  echo "$name requests: $(wc -l < $dir/access.log)"
  kill -QUIT $pid; wait $pid || true
}
run wrk 18991 wrk -t1 -c50 -d3s
run wb 18992 $WB http -t 1 -c 50 -d 3s --quiet
