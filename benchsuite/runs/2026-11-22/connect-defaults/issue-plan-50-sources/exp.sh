#!/usr/bin/env bash
# exp.sh TAG WB SERVERPROCS PORT -- client args...
set -u
TAG=$1 WB=$2 SP=$3 PORT=$4; shift 5
OUT=/tmp/cx/$TAG; mkdir -p $OUT
taskset -c 0 $WB serve echo --listen 127.0.0.1:$PORT --processes $SP --idle-timeout 0 >$OUT/server.out 2>$OUT/server.err &
SPID=$!
for i in $(seq 1 300); do grep -q "worker pids" $OUT/server.out && break; sleep 0.1; done
WP=$(sed -n 's/^worker pids: //p' $OUT/server.out)
nstat -n
timeout -s INT 100 /usr/bin/time -v taskset -c 1 $WB connect 127.0.0.1:$PORT "$@" --server-pid "$WP" --json $OUT/c.json >$OUT/client.out 2>$OUT/client.err
echo "exit $?" >> $OUT/client.out
nstat | grep -Ei "listen|syncook|ReqQ|Drop|Overflow" > $OUT/nstat.txt
kill -INT $SPID; for i in $(seq 1 600); do kill -0 $SPID 2>/dev/null || break; sleep 0.1; done; kill -KILL $SPID 2>/dev/null; wait $SPID 2>/dev/null
grep -E "result|time to|connect \(us\)|connections:|server memory|cpu" $OUT/client.out; cat $OUT/nstat.txt
