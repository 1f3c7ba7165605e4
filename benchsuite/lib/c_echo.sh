# Sourced first by the echo scripts (benchsuite/echo/ab_clients.sh, ab_servers.sh,
# client_syscalls.sh, peer_wakeups.sh), with NAME (see preamble.sh, sourced from here:
# OUT, WORK, PID, stop_server, wait_port, knobs): the C echo pair built once into BUILD
# (inside WORK, removed with it), and the C server started on the next port, pinned to
# CPU 0, into $PID (stopped by stop_server).

# shellcheck source=preamble.sh
source "$(dirname "${BASH_SOURCE[0]}")/preamble.sh" "$1"

BUILD=$WORK/c_echo
mkdir -p "$BUILD"
gcc -O2 -o "$BUILD/c_echo_server" "$REPO/benchsuite/echo/c_echo_server.c"
gcc -O2 -o "$BUILD/c_echo_client" "$REPO/benchsuite/echo/c_echo_client.c"

# Starts the C server on PORT+1 (PORT becomes it) and waits until it accepts.
start_c_server() {
    PORT=$((PORT + 1))
    taskset -c 0 "$BUILD/c_echo_server" 127.0.0.1 "$PORT" 2>/dev/null &
    PID=$!
    wait_port "$PORT"
}

# echo_count_runs COUNT HEADER fresh|per-point: per round (ROUNDS) and point of $POINTS
# (CONNSxDEPTH: connections x messages in flight), one run of the C client, then of each
# wirebench in $CLIENTS (NAME=BIN, `echo -t 1`), 64-byte messages, DURATION seconds, no
# warm-up, pinned to CPU 1, against the C server on the ports from BASE_PORT up: one new
# server per run ("fresh") or one per point, shared by its runs ("per-point"). Each run
# is `COUNT TAG UNITS_CMD -- COMMAND...` (TAG r<ROUND>_<POINT>_<NAME>, "C" for the C
# client; UNITS_CMD prints the messages the run made), whose one-line output (HEADER's
# columns) goes to $OUT/counts.tsv after round and point, and alone to $WORK/rows.tsv
# (for the table functions of count_calls.sh and wakeups.sh).
echo_count_runs() {
    local count=$1 header=$2 servers=$3 round point spec tag units
    PORT=$BASE_PORT
    printf 'round\tpoint\t%s\n' "$header" >"$OUT/counts.tsv"
    for ((round = 1; round <= ROUNDS; round++)); do
        for point in $POINTS; do
            [[ $servers == fresh ]] || start_c_server
            for spec in C=c $CLIENTS; do
                tag=r${round}_${point}_${spec%%=*}
                [[ $servers != fresh ]] || start_c_server
                if [[ $spec == C=c ]]; then
                    units="sed -n 's/.*messages=\([0-9]*\).*/\1/p' $OUT/$tag.stdout"
                    set -- taskset -c 1 "$BUILD/c_echo_client" 127.0.0.1 "$PORT" "${point%x*}" "${point#*x}" 64 "$DURATION" 0
                else
                    units="python3 -c 'import json; j = json.load(open(\"$OUT/$tag.json\")); print(j[\"totals\"][\"ok\"])'"
                    # 36-byte payload + the 28-byte frame header = 64 bytes on the wire.
                    set -- taskset -c 1 "${spec#*=}" echo "127.0.0.1:$PORT" -t 1 -c "${point%x*}" \
                        --pipeline "${point#*x}" --size 36 -d "${DURATION}s" --quiet --json "$OUT/$tag.json"
                fi
                printf '%s\t%s\t%s\n' "$round" "$point" "$("$count" "$tag" "$units" -- "$@")" >>"$OUT/counts.tsv"
                [[ $servers != fresh ]] || stop_server
            done
            [[ $servers == fresh ]] || stop_server
        done
    done
    cut -f3- "$OUT/counts.tsv" >"$WORK/rows.tsv"
}
