#!/bin/bash
# As run for BENCHMARKS.md "Servers: per-request cost, again": CBIN = a directory holding
# c_echo_server and c_echo_client (gcc -O2 of benchsuite/echo/*.c), NGSH = ng.sh here.
CBIN=${CBIN:-/tmp/ps}; NGSH=${NGSH:-$(dirname "$0")/ng.sh}
KIND=$1; BIN=$2; OUTF=$3; PORT=$((19500 + RANDOM % 400)); D=/tmp/ps/ng-$PORT
case $KIND in
nginx) bash $NGSH $PORT $D; taskset -c 0 /usr/sbin/nginx -c $D/nginx.conf -p $D/ 2>/dev/null & P=$!;;
http) taskset -c 0 $BIN serve http --listen 127.0.0.1:$PORT --threads 1 >/dev/null 2>&1 & P=$!;;
echo) taskset -c 0 $BIN serve echo --listen 127.0.0.1:$PORT --threads 1 >/dev/null 2>&1 & P=$!;;
cecho) taskset -c 0 $CBIN/c_echo_server 127.0.0.1 $PORT >/dev/null 2>&1 & P=$!;;
esac
sleep 0.5
perf record -e cpu-clock -F 4999 -g -p $P -o $OUTF -- sleep 3 >/dev/null 2>&1 &
PP=$!
case $KIND in
nginx|http) taskset -c 1 wrk -t1 -c50 -d3s http://127.0.0.1:$PORT/ | sed -n 's/^ *\([0-9]*\) requests in .*/\1/p' ;;
*) taskset -c 1 $CBIN/c_echo_client 127.0.0.1 $PORT ${CONNS:-100} ${INFL:-16} 64 3 2>&1 | tail -2;;
esac
wait $PP
kill -QUIT $P 2>/dev/null; kill -TERM $P 2>/dev/null; wait $P 2>/dev/null
