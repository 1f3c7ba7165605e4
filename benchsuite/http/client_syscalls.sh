#!/usr/bin/env bash
# What each HTTP generator does per request against nginx (one worker, access log on
# and off, benchsuite/http/nginx.conf.in): system calls by kind (reads, EAGAIN reads,
# writes, epoll waits and ctls), context switches, CPU time and epoll events per wait,
# for wrk -t1 and each `wirebench http -t1` in $CLIENTS. Counts from perf's tracepoints
# (benchsuite/lib/count_calls.sh). nginx on CPU 0, the generator on CPU 1.
#
# Usage: CLIENTS="new=path/to/wirebench main=/work/bin/wb-main-8a723d0" \
#        flock -x /work/locks/gate.lock flock -x /work/locks/bench.lock bash benchsuite/http/client_syscalls.sh
# Knobs: ROUNDS=1 DURATION=3 CONNS="50 200" VARIANTS="log nolog" BASE_PORT=18900
#        OUT=benchsuite/runs/<date>/http-syscalls
set -euo pipefail
# shellcheck source=../lib/nginx.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/nginx.sh" http-syscalls
knobs ROUNDS=1 DURATION=3 CONNS="50 200" VARIANTS="log nolog" BASE_PORT=18900
# shellcheck source=../lib/count_calls.sh
source "$REPO/benchsuite/lib/count_calls.sh"
TSV=$OUT/counts.tsv
printf 'round\tpoint\t%s\n' "$COUNT_HEADER" >"$TSV"
PORT=$BASE_PORT
for ((round = 1; round <= ROUNDS; round++)); do
    for variant in $VARIANTS; do
        PORT=$((PORT + 1))
        start_nginx "$variant"
        for c in $CONNS; do
            point=${variant}_c$c
            tag=r${round}_${point}_wrk
            row=$(count_calls "$OUT" "$tag" "sed -n 's/^ *\([0-9]*\) requests in .*/\1/p' $OUT/$tag.stdout" -- \
                taskset -c 1 wrk -t1 -c"$c" -d"${DURATION}s" "http://127.0.0.1:$PORT/")
            printf '%s\t%s\t%s\n' "$round" "$point" "$row" >>"$TSV"
            for spec in $CLIENTS; do
                name=${spec%%=*} bin=${spec#*=}
                tag=r${round}_${point}_$name
                units="python3 -c 'import json; j = json.load(open(\"$OUT/$tag.json\")); print(j[\"totals\"][\"ok\"])'"
                row=$(count_calls "$OUT" "$tag" "$units" -- \
                    taskset -c 1 "$bin" http "http://127.0.0.1:$PORT/" -t 1 -c "$c" -d "${DURATION}s" \
                    --quiet --json "$OUT/$tag.json")
                printf '%s\t%s\t%s\n' "$round" "$point" "$row" >>"$TSV"
            done
        done
        stop_nginx
    done
done
cut -f3- "$TSV" >"$WORK/rows.tsv"
per_unit_table "$WORK/rows.tsv" | tee "$OUT/summary.md"
