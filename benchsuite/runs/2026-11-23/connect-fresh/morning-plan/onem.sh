#!/usr/bin/env bash
# usage: onem.sh DEST PORT OUTPREFIX [client flags...]
set -u
WB=${WB:-/work/bin/wb-main-bf6aabb}
DEST=$1; PORT=$2; OUTP=$3; shift 3
N=${N:-1000000}
taskset -c 0 $WB serve echo --listen $DEST:$PORT --processes 67 >$OUTP-server.out 2>$OUTP-server.err &
SP=$!
for i in $(seq 1 300); do ss -ltn "sport = :$PORT" | grep -q LISTEN && break; sleep 0.1; done
sleep 1
/usr/bin/time -f "client wall %e user %U sys %S" taskset -c 1 $WB connect $DEST:$PORT -n $N --progress 4s --timeout 120s "$@" >$OUTP-client.out 2>$OUTP-client.err
kill -INT $SP; for i in $(seq 1 300); do kill -0 $SP 2>/dev/null || break; sleep 0.1; done; kill -KILL $SP 2>/dev/null; wait $SP 2>/dev/null
grep -E "established 1,000,000|chose|client wall" $OUTP-client.err | head -5
