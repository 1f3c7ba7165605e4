#!/usr/bin/env bash
# Client user memory per idle connection, counted from zero: the whole `wirebench
# echo` process's RSS with N idle connections open minus its RSS with one, divided by
# N - 1. Everything the client holds per connection is in it: the slab (allocated for
# every slot when the worker starts), timer entries, queues and buffers still held.
#
# Each client runs against `wirebench serve echo` (another process, CPU 0) with
# `-c N --ramp 10s -R N/10`: every connection sends one request per 10 s, so nearly
# every connection is idle when the RSS is read (once all N are open, by the
# server's sockets). The one-connection baseline runs the same flags at -c 1 (its
# rate 0.1/s: also idle). Rounds interleave the binaries given. PERIOD=300 leaves
# 98% of the connections with nothing sent when the RSS is read (what holding a
# connection costs, apart from what requests touch: latency histograms, queues).
# A connection whose next request falls after the run's end closes at once, so the
# run lasts 10 PERIODs (it is stopped as soon as the RSS is read).
#
# Since branch idlemem a load of 1,024 connections or more to loopback spreads them
# over 127.0.0.2-127.0.0.255 by default (no linear port search, no burst); EXTRA adds
# flags to the WIREBENCH client only (EXTRA='--source kernel': one source, as before).
#
# Usage: WIREBENCH=path [BEFORE=path] [N=19000] [ROUNDS=3] [PORT=19771] [PERIOD=10] \
#          [EXTRA=flags] bash benchsuite/memory/client_idle.sh   (TSV: one line per binary and round)
set -euo pipefail
WB=${WIREBENCH:-target/release/wirebench}
N=${N:-19000}
ROUNDS=${ROUNDS:-3}
PORT=${PORT:-19771}
PERIOD=${PERIOD:-10}
EXTRA=${EXTRA:-}
SERVER=""
CLIENT=""
stop() {
    [[ -n $CLIENT ]] && kill "$CLIENT" 2>/dev/null && wait "$CLIENT" 2>/dev/null
    [[ -n $SERVER ]] && kill "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null
    CLIENT=""
    SERVER=""
    return 0
}
trap stop EXIT
established() { ss -Htn state established "( sport = :$PORT )" | wc -l; }
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }

# Starts a client of `c` connections; prints its RSS (kB) once `c` are open (or after
# 40 s: then the line says how many were open).
hold() {
    local bin=$1 c=$2 extra=$3 rate n
    rate=$(awk -v c="$c" -v p="$PERIOD" 'BEGIN { r = c / p; printf "%g", (r < 0.001 ? 0.001 : r) }')
    # shellcheck disable=SC2086 # EXTRA is a list of flags
    taskset -c 1 "$bin" echo 127.0.0.1:$PORT -t 1 -c "$c" --ramp 10s -R "$rate" -d $((PERIOD * 10))s -q \
        $extra >/dev/null 2>&1 &
    CLIENT=$!
    for _ in $(seq 1 800); do
        n=$(established)
        if [[ $n -ge $c ]]; then
            sleep 0.5 # the last ones' first requests are answered
            echo "$n $(rss_kb $CLIENT)"
            break
        fi
        sleep 0.05
    done
    [[ ${n:-0} -ge $c ]] || echo "$n $(rss_kb $CLIENT)"
    kill "$CLIENT" 2>/dev/null || true
    wait "$CLIENT" 2>/dev/null || true
    CLIENT=""
}

measure() {
    local label=$1 bin=$2 r=$3 extra=$4 n1 r1 nn rn
    taskset -c 0 "$bin" serve echo --listen 127.0.0.1:$PORT --threads 1 >/dev/null 2>&1 &
    SERVER=$!
    sleep 0.5
    read -r n1 r1 <<<"$(hold "$bin" 1 "$extra")"
    sleep 0.5
    read -r nn rn <<<"$(hold "$bin" "$N" "$extra")"
    kill "$SERVER" 2>/dev/null || true
    wait "$SERVER" 2>/dev/null || true
    SERVER=""
    echo -e "$label\t$r\t$n1\t$r1\t$nn\t$rn\t$(((rn - r1) * 1024 / (nn - n1)))"
    sleep 1
}

echo -e "binary\tround\tconns_a\trss_a_kb\tconns_b\trss_b_kb\tbytes_per_conn"
for r in $(seq 1 "$ROUNDS"); do
    [[ -n ${BEFORE:-} ]] && measure before "$BEFORE" "$r" ""
    measure after "$WB" "$r" "$EXTRA"
done
