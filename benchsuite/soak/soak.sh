#!/usr/bin/env bash
# The soak: `serve http`, `serve redis` and `serve ws` side by side, each its own
# process with one server thread on CPU 0, each under a steady open-loop wirebench load
# (CPU 1) at LOAD_SHARE of its capacity, with a hostile mix beside each
# (benchsuite/soak/hostile.py: connects-and-drops, garbage, resets, tricklers, and for
# ws ping floods), for DURATION. Then checks, printed and in summary.md/summary.json
# (benchsuite/soak/check.py): the loads' requests all answered without error, server and
# generator RSS flat from DURATION/6 to the end (minute 5 of 30), every server's
# descriptors back to their baseline once the clients are gone, and each server's own
# counters equal to what its load and its hostile mix account for. Exit 1 when a check
# fails, 2 when something is missing.
#
# Usage: nice -n 10 bash benchsuite/soak/soak.sh
#   (the checks are counts, memory and descriptors, not timings: no exclusive lock)
# Knobs (environment):
#   DURATION=30m        how long the loads and hostile mixes run (s, m or h)
#   CONNECTIONS=50      connections of each load (-c, one thread)
#   CAPACITY_SECONDS=10 the closed-loop capacity run, all three side by side
#   LOAD_SHARE=0.7      the soak's open-loop rate: this share of each measured capacity
#   RATE_HTTP, RATE_REDIS, RATE_WS  fixed rates instead (all three set: no capacity run)
#   TIMEOUT=30s         the loads' --timeout: a reply later than this is an error
#   HEADER_TIMEOUT=     serve http and ws --header-timeout (empty: the server's default)
#   DROPS_PER_MINUTE=10000 GARBAGE_PER_S=2 RESETS_PER_S=5 TRICKLERS=20 FLOODS=2
#   GRACE=15            seconds the tricklers wait at the end for the server to close them
#   SAMPLE_EVERY=10     seconds between RSS and descriptor samples
#   RSS_FLAT_PCT=10     each RSS sample from DURATION/6 on within this % of the first
#                       (0: not checked)
#   RSS_BOUND_MB=       every sample of every server and generator under this (empty: none)
#   PORT_HTTP=18701 PORT_REDIS=18702 PORT_WS=18703 (the capacity run: each + 10)
#   WIREBENCH=path      the binary (default target/release/wirebench)
#   OUT=benchsuite/runs/<date>/soak   raw output: serve-*.txt, load-*.json and .txt,
#                       hostile-*.json, samples.tsv, descriptors.tsv, meta.json, summary.*
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/preamble.sh" soak

knobs DURATION=30m CONNECTIONS=50 CAPACITY_SECONDS=10 LOAD_SHARE=0.7 TIMEOUT=30s \
    DROPS_PER_MINUTE=10000 GARBAGE_PER_S=2 RESETS_PER_S=5 TRICKLERS=20 FLOODS=2 GRACE=15 \
    SAMPLE_EVERY=10 RSS_FLAT_PCT=10 PORT_HTTP=18701 PORT_REDIS=18702 PORT_WS=18703
WB=${WIREBENCH:-$REPO/target/release/wirebench}
PROTOS=(http redis ws)
need_tools python3 taskset
[[ -x $WB ]] || { echo "!! $WB is missing: cargo build --release first (or WIREBENCH=path)" >&2; exit 2; }

seconds() { # 90 | 90s | 30m | 1h -> seconds
    local v=$1
    case $v in
    *h) echo $((${v%h} * 3600)) ;; *m) echo $((${v%m} * 60)) ;; *s) echo "${v%s}" ;; *) echo "$v" ;;
    esac
}
SECS=$(seconds "$DURATION")
[[ $SECS =~ ^[0-9]+$ && $SECS -ge 30 ]] || { echo "!! DURATION=$DURATION: at least 30s" >&2; exit 2; }

# Every process this script starts, by PID, stopped on any exit.
declare -A SERVER LOAD HOSTILE
SAMPLER=""
cleanup() {
    local p
    for p in "${SERVER[@]}" "${LOAD[@]}" "${HOSTILE[@]}" $SAMPLER; do
        kill "$p" 2>/dev/null || true
    done
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

port_of() { # PROTO [OFFSET]
    local var="PORT_${1^^}"
    echo $((${!var} + ${2:-0}))
}

start_server() { # PROTO PORT LOG
    local extra=()
    [[ $1 != redis && -n ${HEADER_TIMEOUT:-} ]] && extra=(--header-timeout "$HEADER_TIMEOUT")
    taskset -c 0 "$WB" serve "$1" --listen "127.0.0.1:$2" --threads 1 --stats 10s "${extra[@]}" \
        >"$3" 2>&1 &
    SERVER[$1]=$!
    for _ in $(seq 200); do
        grep -q "listening on" "$3" && return 0
        kill -0 "${SERVER[$1]}" 2>/dev/null || break
        sleep 0.1
    done
    echo "!! serve $1 did not start:" >&2
    cat "$3" >&2
    exit 2
}

# Waits until a server thread has made its loop's descriptor (io_uring or epoll), so
# the baseline is the steady one.
wait_loop_fd() { # PID
    for _ in $(seq 200); do
        ls -l /proc/"$1"/task/*/fd 2>/dev/null | grep -q 'anon_inode:\[\(io_uring\|eventpoll\)\]' && return 0
        sleep 0.1
    done
    echo "!! server $1 has no io_uring ring or epoll instance" >&2
    exit 2
}

stop_servers() {
    local p
    for p in "${PROTOS[@]}"; do
        [[ -n ${SERVER[$p]:-} ]] || continue
        kill -TERM "${SERVER[$p]}" 2>/dev/null || true
        wait "${SERVER[$p]}" 2>/dev/null || true
        unset "SERVER[$p]"
    done
}

target_of() { # PROTO PORT
    case $1 in
    http) echo "http://127.0.0.1:$2/" ;; redis) echo "127.0.0.1:$2" ;; ws) echo "ws://127.0.0.1:$2/" ;;
    esac
}

start_load() { # PROTO PORT TAG ARGS...
    local p=$1 port=$2 tag=$3
    shift 3
    taskset -c 1 "$WB" "$p" "$(target_of "$p" "$port")" -c "$CONNECTIONS" -t 1 \
        --json "$OUT/$tag-$p.json" -q "$@" >"$OUT/$tag-$p.txt" 2>&1 &
    LOAD[$p]=$!
}

# ---------------------------------------------------------------- capacity, then rates

declare -A RATE=([http]=${RATE_HTTP:-} [redis]=${RATE_REDIS:-} [ws]=${RATE_WS:-})
if [[ -z ${RATE[http]} || -z ${RATE[redis]} || -z ${RATE[ws]} ]]; then
    echo "== capacity: closed loop, -c $CONNECTIONS -t 1, ${CAPACITY_SECONDS}s, the three side by side" >&2
    for p in "${PROTOS[@]}"; do start_server "$p" "$(port_of "$p" 10)" "$OUT/capacity-serve-$p.txt"; done
    for p in "${PROTOS[@]}"; do start_load "$p" "$(port_of "$p" 10)" capacity -d "${CAPACITY_SECONDS}s"; done
    for p in "${PROTOS[@]}"; do wait "${LOAD[$p]}" || true; unset "LOAD[$p]"; done
    stop_servers
    for p in "${PROTOS[@]}"; do
        [[ -n ${RATE[$p]} ]] && continue
        RATE[$p]=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(max(1, int(float(sys.argv[2]) * r["throughput"]["msgs_per_s"])))' \
            "$OUT/capacity-$p.json" "$LOAD_SHARE")
    done
fi
echo "== rates: http ${RATE[http]}/s, redis ${RATE[redis]}/s, ws ${RATE[ws]}/s for ${SECS}s" >&2

# ---------------------------------------------------------------- the soak

declare -A BASE
for p in "${PROTOS[@]}"; do
    start_server "$p" "$(port_of "$p")" "$OUT/serve-$p.txt"
    wait_loop_fd "${SERVER[$p]}"
    BASE[$p]=$(python3 "$SCRIPT_DIR/sample.py" --fds "${SERVER[$p]}")
done
python3 - "$OUT/meta.json" <<EOF
import json, os, subprocess, sys, time
def run(*a):
    try:
        return subprocess.run(a, capture_output=True, text=True, cwd="$REPO").stdout.strip()
    except OSError:
        return ""
json.dump({
    "command": "nice -n $(nice) bash benchsuite/soak/soak.sh",
    "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    "commit": run("git", "rev-parse", "HEAD"),
    "dirty": bool(run("git", "status", "--porcelain", "--untracked-files=no")),
    "binary": "$WB", "version": run("$WB", "--version"), "kernel": os.uname().release,
    "nice": $(nice), "duration_s": $SECS, "connections": $CONNECTIONS,
    "load_share": float("$LOAD_SHARE"), "capacity_seconds": $CAPACITY_SECONDS,
    "rates": {"http": ${RATE[http]}, "redis": ${RATE[redis]}, "ws": ${RATE[ws]}},
    "timeout": "$TIMEOUT", "header_timeout": "${HEADER_TIMEOUT:-default}",
    "sample_every_s": $SAMPLE_EVERY, "rss_flat_pct": float("$RSS_FLAT_PCT"),
    "rss_bound_mb": float("${RSS_BOUND_MB:-0}") or None,
    "ports": {"http": $PORT_HTTP, "redis": $PORT_REDIS, "ws": $PORT_WS},
}, open(sys.argv[1], "w"), indent=1)
EOF

echo "== soak: loads, hostile mixes and the sampler start" >&2
for p in "${PROTOS[@]}"; do
    start_load "$p" "$(port_of "$p")" load -R "${RATE[$p]}" -d "${SECS}s" --timeout "$TIMEOUT" --progress 10s
    taskset -c 1 python3 "$SCRIPT_DIR/hostile.py" --protocol "$p" --target "127.0.0.1:$(port_of "$p")" \
        --duration "$SECS" --summary "$OUT/hostile-$p.json" --drops-per-minute "$DROPS_PER_MINUTE" \
        --garbage-per-s "$GARBAGE_PER_S" --resets-per-s "$RESETS_PER_S" --tricklers "$TRICKLERS" \
        --floods "$FLOODS" --grace "$GRACE" >"$OUT/hostile-$p.txt" 2>&1 &
    HOSTILE[$p]=$!
done
procs=()
for p in "${PROTOS[@]}"; do
    procs+=("server-$p=${SERVER[$p]}" "load-$p=${LOAD[$p]}" "hostile-$p=${HOSTILE[$p]}")
done
python3 "$SCRIPT_DIR/sample.py" --every "$SAMPLE_EVERY" --out "$OUT/samples.tsv" "${procs[@]}" &
SAMPLER=$!

printf 'name\texit\n' >"$OUT/exits.tsv"
for p in "${PROTOS[@]}"; do
    rc=0; wait "${LOAD[$p]}" || rc=$?
    printf 'load-%s\t%s\n' "$p" "$rc" >>"$OUT/exits.tsv"
    unset "LOAD[$p]"
done
echo "== loads done; the hostile mixes end (tricklers wait up to ${GRACE}s)" >&2
for p in "${PROTOS[@]}"; do
    rc=0; wait "${HOSTILE[$p]}" || rc=$?
    printf 'hostile-%s\t%s\n' "$p" "$rc" >>"$OUT/exits.tsv"
    unset "HOSTILE[$p]"
done
kill "$SAMPLER" 2>/dev/null || true
wait "$SAMPLER" 2>/dev/null || true
SAMPLER=""

# Every client is gone: each server's descriptors back to the baseline (a server
# closes what its clients closed as it reads their ends: up to 30 s for that).
printf 'server\tbaseline\tafter\twaited_s\n' >"$OUT/descriptors.tsv"
for p in "${PROTOS[@]}"; do
    waited=0
    while now=$(python3 "$SCRIPT_DIR/sample.py" --fds "${SERVER[$p]}"); [[ $now != "${BASE[$p]}" && $waited -lt 300 ]]; do
        sleep 0.1
        waited=$((waited + 1))
    done
    printf '%s\t%s\t%s\t%s\n' "$p" "${BASE[$p]}" "$now" "$(awk "BEGIN{print $waited/10}")" >>"$OUT/descriptors.tsv"
done
stop_servers

python3 "$SCRIPT_DIR/check.py" "$OUT"
