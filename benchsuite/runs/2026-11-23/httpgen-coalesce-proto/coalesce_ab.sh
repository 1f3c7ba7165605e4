#!/usr/bin/env bash
# Prototype A/B (engine change NOT committed): wirebench http with a coalescing sleep
# (nanosleep WB_COALESCE_US after a wait that returned < 16 events) vs without, vs wrk,
# against nginx with its access log, c=50 and c=200, 3 s, interleaved rounds.
set -euo pipefail
REPO=/work/wt/httpgen; OUT=$1; mkdir -p $OUT; ROUNDS=${ROUNDS:-3}
NEW=/tmp/wb-httpgen-f1d54fe PROTO=/tmp/wb-httpgen-coalesce
PORT=19100; W=$(mktemp -d)
printf 'round\tc\tgen\treq_per_s\tgen_cpu_s\tnginx_cpu_s\n' > $OUT/raw.tsv
for r in $(seq $ROUNDS); do
 for c in 50 200; do
  PORT=$((PORT+1)); d=$W/n$PORT; mkdir -p $d
  sed -e "s#@PREFIX@#$d#g" -e "s#@PORT@#$PORT#g" $REPO/benchsuite/http/nginx.conf.in > $d/nginx.conf
  sed -i "s#access_log off;#access_log $d/access.log;#" $d/nginx.conf
  taskset -c 0 /usr/sbin/nginx -c $d/nginx.conf -p $d/ 2>/dev/null & P=$!
  sleep 0.5
  for g in wrk new p20 p50; do
    t0=$(awk '{print $14+$15}' /proc/$P/stat); l0=$(wc -l < $d/access.log)
    case $g in
      wrk) cmd=(wrk -t1 -c$c -d3s http://127.0.0.1:$PORT/);;
      new) cmd=($NEW http http://127.0.0.1:$PORT/ -t 1 -c $c -d 3s --quiet);;
      p20) cmd=(env WB_COALESCE_US=20 $PROTO http http://127.0.0.1:$PORT/ -t 1 -c $c -d 3s --quiet);;
      p50) cmd=(env WB_COALESCE_US=50 $PROTO http http://127.0.0.1:$PORT/ -t 1 -c $c -d 3s --quiet);;
    esac
    /usr/bin/time -f "%U %S %e" -o $W/t taskset -c 1 "${cmd[@]}" > $OUT/r${r}_c${c}_$g.out 2>&1 || true
    t1=$(awk '{print $14+$15}' /proc/$P/stat); l1=$(wc -l < $d/access.log)
    read u s e < $W/t
    python3 -c "print('$r\t$c\t$g\t%.0f\t%.3f\t%.2f' % (($l1-$l0)/$e, $u+$s, ($t1-$t0)/100))" >> $OUT/raw.tsv
  done
  kill -QUIT $P; wait $P || true
 done
done
rm -rf $W
column -t $OUT/raw.tsv
