#!/usr/bin/env bash
# Where an HTTP generator's CPU goes per request, beside wrk's, against one nginx (one
# process, access log off or on) pinned to CPU 0, the generator on CPU 1: per request,
# its CPU, context switches, epoll waits, reads, writes and epoll_ctl calls, and
# nginx's CPU and context switches (benchsuite/lib/client_profile.sh), plus a
# `perf record -g` of each generator (its top symbols in OUT/<tag>.symbols.txt).
# A fresh nginx per generator.
#
# Usage: CLIENTS="new=path/to/wirebench main=/work/bin/wb-main-bf6aabb" \
#        flock -x /work/locks/gate.lock flock -x /work/locks/bench.lock bash benchsuite/http/client_profile.sh
# Knobs: CONNS=50 DURATION=3 VARIANT=nolog BASE_PORT=18900 PERF_DATA=dir OUT=benchsuite/runs/<date>/http-client-profile
set -euo pipefail
# shellcheck source=../lib/nginx.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/nginx.sh" http-client-profile
# shellcheck source=../lib/client_profile.sh
source "$REPO/benchsuite/lib/client_profile.sh"
knobs CONNS=50 DURATION=3 VARIANT=nolog BASE_PORT=18900
need_tools perf wrk
PORT=$BASE_PORT
profile_table "$OUT"
tags=()
for spec in wrk=wrk $CLIENTS; do
    name=${spec%%=*} bin=${spec#*=}
    PORT=$((PORT + 1))
    start_nginx "$VARIANT"
    if [[ $name == wrk ]]; then
        units="sed -n 's/^ *\([0-9]*\) requests in .*/\1/p' $OUT/wrk.stdout"
        set -- wrk -t1 -c"$CONNS" -d"${DURATION}s" "http://127.0.0.1:$PORT/"
    else
        units=$(wirebench_units "$OUT/$name.json")
        set -- "$bin" http "http://127.0.0.1:$PORT/" -t 1 -c "$CONNS" -d "${DURATION}s" --quiet --json "$OUT/$name.json"
    fi
    profile_client "$OUT" "$name" "$PID" "$units" -- "$@" >>"$TSV"
    stop_nginx
    tags+=("$name")
done
profile_report "$OUT" "${tags[@]}"
