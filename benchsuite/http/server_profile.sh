#!/usr/bin/env bash
# Where each HTTP server's CPU goes under the same wrk load: a cpu-clock profile with
# call graphs (perf record -e cpu-clock -g, attached to the server for the run) of
# nginx (one process, access log off) and of `serve http --threads 1` of each wirebench
# in $SERVES, and a flat table of their top symbols (self time, kernel and user alike)
# side by side. Server pinned to CPU 0, wrk -t1 -c$CONNS to CPU 1.
#
# Usage: SERVES="main=/work/bin/wb-main-51ec707" \
#        flock -x /work/locks/gate.lock flock -x /work/locks/bench.lock bash benchsuite/http/server_profile.sh
# Knobs: DURATION=3 CONNS=50 TOP=30 BASE_PORT=18400 OUT=benchsuite/runs/<date>/http-server-profile
set -euo pipefail
# shellcheck source=../lib/nginx.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/nginx.sh" http-server-profile
knobs DURATION=3 CONNS=50 TOP=30 BASE_PORT=18400
# shellcheck source=../lib/server_profile.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/server_profile.sh"
PORT=$((BASE_PORT + 1))
WRK=(taskset -c 1 wrk -t1 -c"$CONNS" -d"${DURATION}s")
start_nginx nolog
server_profile nginx-nolog "${WRK[@]}" "http://127.0.0.1:$PORT/"
stop_nginx
server_profiles http "${WRK[@]}" "http://127.0.0.1:@PORT/"
server_profile_summary
