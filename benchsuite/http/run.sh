#!/usr/bin/env bash
# HTTP benchmark: wirebench's HTTP/1.1 load generator against wrk, and
# `wirebench serve http` against nginx, on loopback, with the server pinned to
# CPU 0 and the load generator pinned to CPU 1.
#
# Usage: bash benchsuite/http/run.sh        (from anywhere; run it under
#        `flock -x /work/machine.lock` on a shared machine)
# Knobs (environment):
#   ROUNDS=3      interleaved rounds; each round runs every measurement once
#   DURATION=5    seconds per generator run
#   OUT=benchsuite/runs/<date>/http   output directory (created)
#   BASE_PORT=18100  first port; every server start uses the next one
#   WIREBENCH=path   use this binary instead of cargo build --release
#   HERTZ_N=200000   requests per hertz point (hertz-benchmark uses 3,000,000)
#   SERVER_ONLY=1    only the server comparison: wrk -t1 -c50 against nginx log,
#                    nginx nolog and serve http per round (no generator runs, no
#                    hertz points), with a server-only summary
#   SERVES="a=BIN b=BIN"  with SERVER_ONLY=1: several wirebench binaries' `serve
#                    http`, each in every round (tag serve-NAME_wrk_c50), each
#                    compared with the same round's nginx runs (a before/after A/B)
#
# Per round:
#   nginx, two configs (benchsuite/http/nginx.conf.in): "log" writes the default
#   access log (one write(2) per request: the setup PEERS.md describes, ~121k
#   req/s to wrk there) and "nolog" has access_log off (a faster nginx).
#     g_wrk_C   wrk -t1 -cC -dD against nginx          C in 50, 200
#     g_wb_C    wirebench http -t1 -cC -dD against nginx
#   serve:      wrk -t1 -c50 -dD against `wirebench serve http --threads 1`
#   hertz_B:    wirebench http -t1 -c100 -n HERTZ_N POST, B-byte body,
#               1 KiB test-header, --expect-echo, against serve http; B in 1k..64k
# Each generator run is wrapped to record its user+sys CPU time.
# Output: $OUT/raw.tsv, per-run stdout/stderr/json, $OUT/summary.md
set -euo pipefail

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-5}
BASE_PORT=${BASE_PORT:-18100}
HERTZ_N=${HERTZ_N:-200000}
SERVER_ONLY=${SERVER_ONLY:-0}

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/../.." && pwd)
OUT=${OUT:-$REPO/benchsuite/runs/$(date +%F)/http}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
HOST=127.0.0.1
CONNS=(50 200)
BODIES=(1k 4k 16k 64k)
if [[ $SERVER_ONLY == 1 ]]; then
    CONNS=(50)
    BODIES=()
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/wirebench-http.XXXXXX")
SERVER_PID=""
cleanup() {
    stop_server
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
log() { printf '%s\n' "$*" >&2; }

for tool in nginx wrk taskset python3; do
    command -v "$tool" >/dev/null 2>&1 || [[ -x /usr/sbin/$tool ]] || {
        log "!! $tool is missing (apt-get install nginx wrk util-linux python3)"
        exit 2
    }
done
NGINX=$(command -v nginx || echo /usr/sbin/nginx)

if [[ -n "${WIREBENCH:-}" ]]; then
    WB=$WIREBENCH
else
    WB=${CARGO_TARGET_DIR:-$REPO/target}/release/wirebench
    log "== cargo build --release (log: $OUT/cargo-build.log)"
    (cd "$REPO" && cargo build --release) >"$OUT/cargo-build.log" 2>&1 || {
        log "!! cargo build --release failed"
        tail -n 20 "$OUT/cargo-build.log" >&2
        exit 1
    }
fi

# Runs a command; writes "user_s sys_s wall_s" of it (and its children) to $1.
cat >"$WORK/cputime.py" <<'EOF'
import resource, subprocess, sys, time
out = sys.argv[1]
t0 = time.monotonic()
rc = subprocess.call(sys.argv[2:])
wall = time.monotonic() - t0
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(out, "w") as f:
    f.write(f"{ru.ru_utime:.6f} {ru.ru_stime:.6f} {wall:.6f}\n")
sys.exit(rc if rc >= 0 else 128 - rc)
EOF
cputime() { python3 "$WORK/cputime.py" "$@"; }

PORT=$BASE_PORT
wait_port() {
    local port=$1 pid=$2 i
    for ((i = 0; i < 50; i++)); do
        kill -0 "$pid" 2>/dev/null || return 1
        if timeout 1 bash -c "exec 3<>/dev/tcp/$HOST/$port" 2>/dev/null; then
            return 0
        fi
        sleep 0.1
    done
    return 1
}

# start_nginx log|nolog
start_nginx() {
    local variant=$1 dir=$WORK/nginx-$PORT
    mkdir -p "$dir"
    sed -e "s#@PREFIX@#$dir#g" -e "s#@PORT@#$PORT#g" "$SCRIPT_DIR/nginx.conf.in" >"$dir/nginx.conf"
    if [[ $variant == log ]]; then
        sed -i "s#access_log off;#access_log $dir/access.log;#" "$dir/nginx.conf"
    fi
    taskset -c 0 "$NGINX" -c "$dir/nginx.conf" -p "$dir/" 2>"$OUT/nginx-$PORT.stderr" &
    SERVER_PID=$!
    wait_port "$PORT" "$SERVER_PID" || { log "!! nginx did not start"; cat "$dir/error.log" >&2 || true; exit 1; }
}

start_wb_server() { # [BIN]
    taskset -c 0 "${1:-$WB}" serve http --listen "$HOST:$PORT" --threads 1 >/dev/null 2>"$OUT/serve-$PORT.stderr" &
    SERVER_PID=$!
    wait_port "$PORT" "$SERVER_PID" || { log "!! serve http did not start"; exit 1; }
}

stop_server() {
    local pid=$SERVER_PID i
    [[ -n "$pid" ]] || return 0
    kill -QUIT "$pid" 2>/dev/null || true   # nginx: graceful; wirebench: ends too
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    SERVER_PID=""
}

# The server's CPU time (user+sys, clock ticks) from /proc, around each run.
TICK=$(getconf CLK_TCK)
server_ticks() { awk '{print $14 + $15}' "/proc/$SERVER_PID/stat" 2>/dev/null || echo 0; }
SERVER_T0=0
RAW=$OUT/raw.tsv
printf 'round\ttag\treq_per_s\trequests\tcpu_s\twall_s\tp99_us\tp999_us\tserver_cpu_s\n' >"$RAW"
record() { # ROUND TAG RPS REQUESTS P99 P999 (cpu from $WORK/cpu)
    local u s w
    read -r u s w <"$WORK/cpu" || { u=0; s=0; w=0; }
    local cpu scpu
    cpu=$(python3 -c "print(f'{$u + $s:.3f}')")
    scpu=$(python3 -c "print(f'{($(server_ticks) - $SERVER_T0) / $TICK:.2f}')")
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$cpu" "$w" "$5" "$6" "$scpu" >>"$RAW"
    log "   r$1 $2: req/s=$3 requests=$4 cpu_s=$cpu p99_us=$5 p999_us=$6 server_cpu_s=$scpu"
}

# run_wrk ROUND TAG CONNS URL
run_wrk() {
    local f=$OUT/r$1_$2.wrk.txt rps n p99
    SERVER_T0=$(server_ticks)
    cputime "$WORK/cpu" taskset -c 1 wrk -t1 -c"$3" -d"${DURATION}s" --latency "$4" >"$f" 2>&1 || true
    rps=$(sed -n 's/^Requests\/sec: *\([0-9.]*\).*/\1/p' "$f")
    n=$(sed -n 's/^ *\([0-9]*\) requests in .*/\1/p' "$f")
    p99=$(awk '$1=="99%" {v=$2; if (v ~ /ms$/) {sub("ms","",v); v*=1000} else if (v ~ /us$/) {sub("us","",v)} else if (v ~ /s$/) {sub("s","",v); v*=1e6}; print v}' "$f")
    record "$1" "$2" "${rps:-FAIL}" "${n:-0}" "${p99:-}" ""
}

# run_wb ROUND TAG ARGS...
run_wb() {
    local round=$1 tag=$2 json=$OUT/r$1_$2.json
    shift 2
    rm -f "$json"
    SERVER_T0=$(server_ticks)
    cputime "$WORK/cpu" taskset -c 1 "$WB" http "$@" -t 1 --quiet --json "$json" \
        >"$OUT/r${round}_$tag.stdout" 2>"$OUT/r${round}_$tag.stderr" || true
    if [[ -s $json ]]; then
        read -r rps n p99 p999 < <(python3 -c '
import json,sys; j=json.load(open(sys.argv[1]))
ok = j["totals"]["ok"] + j["warmup"]["ok"]
bad = "" if j["outcome"]["success"] else "FAIL:"
rps = j["throughput"]["msgs_per_s"]
print("%s%.1f" % (bad, rps), ok, j["latency_us"]["p99"], j["latency_us"]["p99_9"])' "$json")
        record "$round" "$tag" "$rps" "$n" "$p99" "$p999"
    else
        record "$round" "$tag" FAIL 0 "" ""
    fi
}

log "== ROUNDS=$ROUNDS DURATION=${DURATION}s HERTZ_N=$HERTZ_N OUT=$OUT"
for ((round = 1; round <= ROUNDS; round++)); do
    log "== round $round/$ROUNDS"
    for variant in log nolog; do
        PORT=$((PORT + 1))
        start_nginx "$variant"
        for c in "${CONNS[@]}"; do
            run_wrk "$round" "nginx-${variant}_wrk_c$c" "$c" "http://$HOST:$PORT/"
            [[ $SERVER_ONLY == 1 ]] ||
                run_wb "$round" "nginx-${variant}_wb_c$c" "http://$HOST:$PORT/" -c "$c" -d "${DURATION}s"
        done
        stop_server
    done
    for spec in ${SERVES:-}; do
        PORT=$((PORT + 1))
        start_wb_server "${spec#*=}"
        run_wrk "$round" "serve-${spec%%=*}_wrk_c50" 50 "http://$HOST:$PORT/"
        stop_server
    done
    PORT=$((PORT + 1))
    start_wb_server
    run_wrk "$round" "serve_wrk_c50" 50 "http://$HOST:$PORT/"
    for b in "${BODIES[@]+"${BODIES[@]}"}"; do
        run_wb "$round" "hertz_$b" "http://$HOST:$PORT/" -c 100 -n "$HERTZ_N" \
            --body-size "$b" --header-size 1024 --expect-echo
    done
    stop_server
done

if [[ $SERVER_ONLY == 1 ]]; then
    # Per round: req/s and server CPU per request of each server under the same wrk.
    python3 - "$RAW" "$OUT/summary.md" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
by = {(r["round"], r["tag"]): r for r in rows}
rounds = sorted({r["round"] for r in rows}, key=int)
def f(r, k):
    try:
        return float(r[k])
    except (KeyError, ValueError):
        return None
def per_cpu(r):  # requests per server CPU-second
    n, c = f(r, "requests"), f(r, "server_cpu_s")
    return n / c if n and c else None
def stat(v):
    v = [x for x in v if x is not None]
    return f"{statistics.median(v):.3f}x [{min(v):.3f}-{max(v):.3f}]" if v else "FAIL"
lines = ["| measure (wrk -t1 -c50, per round) | median [range] |", "|---|---|"]
serves = list(dict.fromkeys(r["tag"] for r in rows if r["tag"].startswith("serve")))
for tag in serves:
    name = "serve http" if tag == "serve_wrk_c50" else tag[: -len("_wrk_c50")]
    for peer in ("log", "nolog"):
        s = [by.get((x, tag)) for x in rounds]
        n = [by.get((x, f"nginx-{peer}_wrk_c50")) for x in rounds]
        lines.append(f"| {name} / nginx {peer}: req/s | " + stat(
            [f(a, "req_per_s") / f(b, "req_per_s") if a and b and f(a, "req_per_s") and f(b, "req_per_s") else None for a, b in zip(s, n)]) + " |")
        lines.append(f"| {name} / nginx {peer}: requests per server CPU-s | " + stat(
            [per_cpu(a) / per_cpu(b) if a and b and per_cpu(a) and per_cpu(b) else None for a, b in zip(s, n)]) + " |")
for tag in serves + ["nginx-log_wrk_c50", "nginx-nolog_wrk_c50"]:
    v = [per_cpu(by[(x, tag)]) for x in rounds if (x, tag) in by]
    v = [x for x in v if x]
    if v:
        lines.append(f"| {tag}: requests per server CPU-s | {statistics.median(v):,.0f} [{min(v):,.0f}-{max(v):,.0f}] |")
text = "\n".join(lines) + "\n"
open(sys.argv[2], "w").write(text)
print(text, end="")
PY
else
    python3 "$SCRIPT_DIR/summary.py" "$RAW" "$OUT/summary.md" "$ROUNDS" "$DURATION" "$HERTZ_N"
fi
find "$OUT" -maxdepth 1 -type f \( -name '*.stderr' -o -name '*.stdout' \) -empty -delete
log "== results in $OUT"
