#!/usr/bin/env bash
# Where an echo client's CPU goes per message, beside the C epoll client's, against
# the C server pinned to CPU 0, the client on CPU 1, 64-byte messages at CONNS x DEPTH:
# per message, its CPU, context switches, epoll waits, reads, writes and epoll_ctl
# calls, and the server's CPU and context switches (benchsuite/lib/client_profile.sh),
# plus a `perf record -g` of each client (its top symbols in OUT/<tag>.symbols.txt).
# A fresh C server per client.
#
# Usage: CLIENTS="new=path/to/wirebench main=/work/bin/wb-main-bf6aabb" \
#        flock -x /work/locks/gate.lock flock -x /work/locks/bench.lock bash benchsuite/echo/client_profile.sh
# Knobs: CONNS=100 DEPTH=16 DURATION=3 BASE_PORT=9900 PERF_DATA=dir OUT=benchsuite/runs/<date>/echo-client-profile
set -euo pipefail
# shellcheck source=../lib/c_echo.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/c_echo.sh" echo-client-profile
# shellcheck source=../lib/client_profile.sh
source "$REPO/benchsuite/lib/client_profile.sh"
knobs CONNS=100 DEPTH=16 DURATION=3 BASE_PORT=9900
need_tools perf
PORT=$BASE_PORT
profile_table "$OUT"
tags=()
for spec in C=c $CLIENTS; do
    name=${spec%%=*} bin=${spec#*=}
    start_c_server
    if [[ $name == C ]]; then
        units="sed -n 's/.*messages=\([0-9]*\).*/\1/p' $OUT/C.stdout"
        set -- "$BUILD/c_echo_client" 127.0.0.1 "$PORT" "$CONNS" "$DEPTH" 64 "$DURATION" 0
    else
        units=$(wirebench_units "$OUT/$name.json")
        # 36-byte payload + the 28-byte frame header = 64 bytes on the wire.
        set -- "$bin" echo "127.0.0.1:$PORT" -t 1 -c "$CONNS" --pipeline "$DEPTH" --size 36 \
            -d "${DURATION}s" --quiet --json "$OUT/$name.json"
    fi
    profile_client "$OUT" "$name" "$PID" "$units" -- "$@" >>"$TSV"
    stop_server
    tags+=("$name")
done
profile_report "$OUT" "${tags[@]}"
