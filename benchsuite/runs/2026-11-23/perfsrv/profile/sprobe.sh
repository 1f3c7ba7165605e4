#!/bin/bash
# As run for BENCHMARKS.md "Servers: per-request cost, again": CBIN = a directory holding
# c_echo_server and c_echo_client (gcc -O2 of benchsuite/echo/*.c), NGSH = ng.sh here.
CBIN=${CBIN:-/tmp/ps}; NGSH=${NGSH:-$(dirname "$0")/ng.sh}
# sprobe.sh KIND BIN [CONNS INFL]: syscalls per message/request of the server
KIND=$1; BIN=$2; PORT=$((20500 + RANDOM % 400)); D=/tmp/ps/ng-$PORT
case $KIND in
echo) taskset -c 0 $BIN serve echo --listen 127.0.0.1:$PORT --threads 1 >/dev/null 2>&1 & P=$!;;
cecho) taskset -c 0 $CBIN/c_echo_server 127.0.0.1 $PORT >/dev/null 2>&1 & P=$!;;
nginx) bash $NGSH $PORT $D; taskset -c 0 /usr/sbin/nginx -c $D/nginx.conf -p $D/ 2>/dev/null & P=$!;;
http) taskset -c 0 $BIN serve http --listen 127.0.0.1:$PORT --threads 1 >/dev/null 2>&1 & P=$!;;
esac
sleep 0.4
EV=syscalls:sys_enter_read,syscalls:sys_enter_recvfrom,syscalls:sys_enter_sendto,syscalls:sys_enter_write,syscalls:sys_enter_writev,syscalls:sys_enter_epoll_pwait2,syscalls:sys_enter_epoll_wait,syscalls:sys_enter_epoll_ctl,sched:sched_switch,syscalls:sys_exit_read,syscalls:sys_exit_recvfrom
perf stat -x, -e $EV -p $P -o /tmp/ps/ps.$PORT -- sleep 2.2 &
PP=$!
case $KIND in
nginx|http) N=$(taskset -c 1 wrk -t1 -c50 -d2s http://127.0.0.1:$PORT/ | sed -n 's/^ *\([0-9]*\) requests in .*/\1/p');;
*) N=$(taskset -c 1 $CBIN/c_echo_client 127.0.0.1 $PORT $3 $4 64 2 0 2>&1 | sed -n 's/.*messages=\([0-9]*\).*/\1/p');;
esac
wait $PP
kill -QUIT $P 2>/dev/null; kill -TERM $P 2>/dev/null; wait $P 2>/dev/null
echo "$KIND $3x$4 n=$N $(awk -F, -v n=$N '$1 ~ /^[0-9]+$/ && $1>0 {split($3,a,":"); printf "%s=%.3f ", a[2], $1/n}' /tmp/ps/ps.$PORT)"
