#!/usr/bin/env bash
# callgrind instructions of `serve http` (epoll, one thread) per h2 request: BIN TAG PORT N
set -euo pipefail
BIN=$1 TAG=$2 PORT=$3 N=$4 OUT=$5
WIREBENCH_SERVER_LOOP=epoll valgrind --tool=callgrind --callgrind-out-file=$OUT/$TAG.cg.out \
  $BIN serve http --listen 127.0.0.1:$PORT --threads 1 > $OUT/$TAG.serve.txt 2> $OUT/$TAG.valgrind.txt &
VP=$!
for i in $(seq 100); do grep -q "listening on" $OUT/$TAG.serve.txt 2>/dev/null && break; sleep 0.2; done
h2load -n $N -c 10 -m 10 -t 1 http://127.0.0.1:$PORT/ > $OUT/$TAG.h2load.txt 2>&1
kill -INT $VP; wait $VP || true
ir=$(grep -oE "Collected : [0-9]+" $OUT/$TAG.valgrind.txt | grep -oE "[0-9]+")
reqs=$(grep -oE "requests: [0-9]+ total, [0-9]+ started, [0-9]+ done, [0-9]+ succeeded" $OUT/$TAG.h2load.txt)
echo "$TAG server: $ir instructions for $N requests ($reqs): $((ir / N)) per request"
