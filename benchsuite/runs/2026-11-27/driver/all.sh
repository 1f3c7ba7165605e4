#!/usr/bin/env bash
# Everything for the driver's figures, in one exclusive hold.
set -uo pipefail
cd /work/wt/driver
R=benchsuite/runs/$(date +%F)/driver
mkdir -p "$R"
B=/tmp/driver-bench
{
echo "start: $(date -u)"
echo "base: /tmp/driver-base-8a34b97 (main 8a34b97, release); new: /tmp/driver-new-8db08c4 (branch driver 8db08c4, release)"
echo "uptime: $(uptime)"
} > "$R/README.txt"
env SERVERS="base-uring=$B/base-uring new-uring=$B/new-uring base-epoll=$B/base-epoll new-epoll=$B/new-epoll" \
    ROUNDS=3 DURATION=5 WARMUP=1 OUT=$R/echo-ab-1 bash benchsuite/echo/ab_servers.sh
env SERVERS="new-uring=$B/new-uring base-uring=$B/base-uring new-epoll=$B/new-epoll base-epoll=$B/base-epoll" \
    ROUNDS=3 DURATION=5 WARMUP=1 BASE_PORT=9500 OUT=$R/echo-ab-2 bash benchsuite/echo/ab_servers.sh
env SERVES="base-uring=$B/base-uring new-uring=$B/new-uring base-epoll=$B/base-epoll new-epoll=$B/new-epoll" \
    ROUNDS=8 DURATION=2 OUT=$R/http-ab bash benchsuite/http/ab_servers.sh
env SERVES="base=/tmp/driver-base-8a34b97 new=/tmp/driver-new-8db08c4" CLIENT=/tmp/driver-new-8db08c4 \
    N=18000 ROUNDS=3 OUT=$R/idle-one-process bash $B/idle_one_process.sh
env N=100000 P=7 ROUNDS=2 WIREBENCH=/tmp/driver-new-8db08c4 OUT=$R/idle-processes-new bash benchsuite/memory/idle_server.sh
taskset -c 0 /tmp/driver-slotbench/slotbench > $R/slot-stores.txt 2>&1
echo "end: $(date -u)" >> "$R/README.txt"
