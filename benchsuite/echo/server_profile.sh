#!/usr/bin/env bash
# Where each echo server's CPU goes under the same C client load: a cpu-clock profile
# with call graphs (perf record -e cpu-clock -g, attached to the server for the run) of
# the C epoll server and of `serve echo --threads 1` of each wirebench in $SERVES, and
# their top symbols and shared objects (kernel against user space) by self time. Server
# pinned to CPU 0, the C client (64-byte messages, CONNS x DEPTH) to CPU 1.
#
# Usage: SERVES="main=/work/bin/wb-main-80104a0" \
#        flock -x /work/locks/gate.lock flock -x /work/locks/bench.lock bash benchsuite/echo/server_profile.sh
# Knobs: CONNS=10 DEPTH=1 DURATION=3 TOP=30 BASE_PORT=9700 OUT=benchsuite/runs/<date>/echo-server-profile
set -euo pipefail
# shellcheck source=../lib/c_echo.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/c_echo.sh" echo-server-profile
# shellcheck source=../lib/server_profile.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/server_profile.sh"
knobs CONNS=10 DEPTH=1 DURATION=3 TOP=30 BASE_PORT=9700
need_tools perf taskset gcc
[[ -n ${SERVES:-} ]] || { echo "!! SERVES=\"name=BIN ...\" is required" >&2; exit 2; }
PORT=$BASE_PORT
LOAD=(taskset -c 1 "$BUILD/c_echo_client" 127.0.0.1)
LOAD_ARGS=("$CONNS" "$DEPTH" 64 "$DURATION" 0)
start_c_server
server_profile c-server "${LOAD[@]}" "$PORT" "${LOAD_ARGS[@]}"
stop_server
server_profiles echo "${LOAD[@]}" @PORT "${LOAD_ARGS[@]}"
server_profile_summary
