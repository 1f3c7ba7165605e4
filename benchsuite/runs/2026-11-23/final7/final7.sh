#!/usr/bin/env bash
# The seventh session's final same-run comparison: merged main against the session's start and the peers.
set -u
cd /work/main
M=/work/bin/wb-main-4c0201d N=${N:?merged binary} R=benchsuite/runs/2026-11-23/final7
run() { echo "== $(date -u +%T) $*"; flock -x /work/locks/gate.lock flock -x /work/locks/bench.lock timeout 300 env "$@"; echo "rc $?"; }
run SERVES="main=$M merged=$N" ROUNDS=9 DURATION=2 LOG=0 OUT=$R/http-servers-1 bash benchsuite/http/ab_servers.sh
run SERVES="merged=$N main=$M" ROUNDS=9 DURATION=2 LOG=0 OUT=$R/http-servers-2 bash benchsuite/http/ab_servers.sh
run SERVERS="main=$M merged=$N" ROUNDS=4 DURATION=3 WARMUP=0 OUT=$R/echo-servers bash benchsuite/echo/ab_servers.sh
run CLIENTS="merged=$N main=$M" ROUNDS=6 DURATION=3 WARMUP=1 OUT=$R/echo-clients bash benchsuite/echo/ab_clients.sh
run CLIENTS="merged=$N main=$M" POINTS="nolog:50 log:50 nolog:200 log:200" ROUNDS=3 DURATION=3 OUT=$R/http-clients bash benchsuite/http/ab_clients.sh
run ROUNDS=3 DURATION=3 PERFTEST_S=5 WIREBENCH=$N OUT=$R/amqp bash benchsuite/amqp/run.sh
run A=$M B=$N ROUNDS=3 DURATION=5 OUT=$R/amqp-churn-ab bash benchsuite/amqp/churn_ab.sh
echo "== $(date -u +%T) done"
