# Sourced by the server profiles (benchsuite/http/server_profile.sh,
# benchsuite/echo/server_profile.sh) after their preamble (WORK, OUT, PID, PORT,
# stop_server, wait_port): one cpu-clock profile with call graphs of the server in $PID
# for the run of a load, and the table of its top symbols by self time.

# server_profile TAG LOAD...: records $PID for DURATION+1 s while LOAD (pinned by the
# caller) runs, its output in OUT/TAG.load.txt; the top TOP symbols in OUT/TAG.top.txt
# and the top shared objects in OUT/TAG.dso.txt (kernel against user space).
server_profile() {
    local tag=$1 perf_pid
    shift
    perf record -q -e cpu-clock -g -o "$WORK/$tag.data" -p "$PID" -- sleep "$((DURATION + 1))" 2>/dev/null &
    perf_pid=$!
    sleep 0.3
    "$@" >"$OUT/$tag.load.txt" 2>&1 || true
    wait "$perf_pid" || true
    # head ends the pipes early
    perf report -i "$WORK/$tag.data" --no-children --sort sym --stdio -q 2>/dev/null |
        grep -E '^ +[0-9.]+%' | head -n "$TOP" >"$OUT/$tag.top.txt" || true
    perf report -i "$WORK/$tag.data" --no-children --sort dso --stdio -q 2>/dev/null |
        grep -E '^ +[0-9.]+%' | head -n 8 >"$OUT/$tag.dso.txt" || true
}

# server_profiles SERVE_ARGS LOAD...: server_profile of `BIN serve SERVE_ARGS` for each
# NAME=BIN of $SERVES (CPU 0, `--threads 1`, on the next port), tagged serve-NAME; LOAD's
# arguments may name the port as @PORT.
server_profiles() {
    local serve_args=$1 spec
    shift
    for spec in $SERVES; do
        PORT=$((PORT + 1))
        # shellcheck disable=SC2086 # SERVE_ARGS is words
        taskset -c 0 "${spec#*=}" serve $serve_args --listen "127.0.0.1:$PORT" --threads 1 >/dev/null 2>&1 &
        PID=$!
        wait_port "$PORT"
        server_profile "serve-${spec%%=*}" "${@//@PORT/$PORT}"
        stop_server
    done
}

# server_profile_summary: every profile's load count, shared objects and top symbols,
# into OUT/summary.txt.
server_profile_summary() {
    local f
    for f in "$OUT"/*.top.txt; do
        # The load's count: wrk's "N requests in", the C client's "messages=N".
        echo "== $(basename "$f" .top.txt): $(grep -m1 -E 'requests in|messages=' "${f%.top.txt}.load.txt" | sed 's/^ *//')"
        cat "${f%.top.txt}.dso.txt" "$f"
    done | tee "$OUT/summary.txt"
}
