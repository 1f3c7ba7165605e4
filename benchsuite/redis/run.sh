#!/usr/bin/env bash
# Redis benchmark: `wirebench redis` against redis-benchmark, both loading the same
# redis-server, and `serve redis` against redis-server under the same
# redis-benchmark; every server pinned to CPU 0, every generator to CPU 1, on
# loopback.
#
# Usage: flock -x /work/locks/bench.lock bash benchsuite/redis/run.sh
# Knobs (environment):
#   ROUNDS=3        interleaved rounds; each round runs every measurement once
#   N1=200000       requests per run at pipeline 1
#   N16=2000000     requests per run at pipeline 16
#   COMMAND=set     set or get (redis-benchmark -t and wirebench --command)
#   OUT=benchsuite/runs/<date>/redis   output directory (created)
#   BASE_PORT=18600 first port; every server start uses the next one
#   WIREBENCH=path  use this binary instead of target/release/wirebench
#   SLIDING=1       also run wirebench with --pipeline-mode sliding (tag gen_wbs_P)
#   BEFORE=path     also run this older wirebench binary, same flags (tag gen_wbb_P)
#
# Per round, for P in 1 and 16 (-c 50, -t 1 / single-threaded redis-benchmark):
#   gen_rb_P   redis-benchmark -t COMMAND -c 50 -P P -n N     against redis-server
#   gen_wb_P   wirebench redis -t 1 -c 50 --pipeline P -n N   against redis-server
#              (--pipeline is redis-benchmark's -P: burst, the default since rwin)
#   gen_wbs_P / gen_wbb_P: the same with --pipeline-mode sliding / the BEFORE binary
#              (SLIDING=1 / BEFORE=path), on the same redis-server right after
#              (gen_wb and gen_wbs swap places every other round)
#   srv_redis_P / srv_wb_P: redis-benchmark -t COMMAND -c 50 -P P against
#              redis-server and against `wirebench serve redis --threads 1`
# Each generator run records its user+sys CPU time (getrusage of the child); each
# server run the server's CPU time from /proc/PID/stat.
# Output: $OUT/raw.tsv, per-run output, $OUT/summary.md
set -euo pipefail

ROUNDS=${ROUNDS:-3}
N1=${N1:-200000}
N16=${N16:-2000000}
COMMAND=${COMMAND:-set}
BASE_PORT=${BASE_PORT:-18600}

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/../.." && pwd)
OUT=${OUT:-$REPO/benchsuite/runs/$(date +%F)/redis}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
WB=${WIREBENCH:-$REPO/target/release/wirebench}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/wirebench-redis.XXXXXX")
SERVER_PID=""
log() { printf '%s\n' "$*" >&2; }
stop_server() {
    if [[ -n $SERVER_PID ]]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
        SERVER_PID=""
    fi
}
cleanup() {
    stop_server
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for tool in redis-server redis-benchmark redis-cli taskset python3; do
    command -v "$tool" >/dev/null 2>&1 || {
        log "!! $tool is missing (apt-get install redis-server redis-tools util-linux python3)"
        exit 2
    }
done
[[ -x $WB ]] || {
    log "!! $WB is missing: cargo build --release first (or WIREBENCH=path)"
    exit 2
}

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
TICK=$(getconf CLK_TCK)
server_ticks() { awk '{print $14 + $15}' "/proc/$SERVER_PID/stat" 2>/dev/null || echo 0; }

PORT=$BASE_PORT
start_redis() {
    PORT=$((PORT + 1))
    taskset -c 0 redis-server --port "$PORT" --bind 127.0.0.1 --save "" --appendonly no \
        >"$WORK/server.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 100); do
        [[ $(redis-cli -p "$PORT" PING 2>/dev/null) == PONG ]] && return 0
        sleep 0.05
    done
    log "!! redis-server did not start"; exit 1
}
start_serve() {
    PORT=$((PORT + 1))
    taskset -c 0 "$WB" serve redis --threads 1 --listen "127.0.0.1:$PORT" >"$WORK/server.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 100); do
        [[ $(redis-cli -p "$PORT" PING 2>/dev/null) == PONG ]] && return 0
        sleep 0.05
    done
    log "!! serve redis did not start"; exit 1
}

RAW=$OUT/raw.tsv
printf 'round\ttag\treq_per_s\trequests\tgen_cpu_s\twall_s\tserver_cpu_s\n' >"$RAW"
record() { # ROUND TAG RPS REQUESTS
    local u s w cpu scpu
    read -r u s w <"$WORK/cpu" || { u=0; s=0; w=0; }
    cpu=$(python3 -c "print(f'{$u + $s:.3f}')")
    scpu=$(python3 -c "print(f'{($(server_ticks) - $SERVER_T0) / $TICK:.2f}')")
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$cpu" "$w" "$scpu" >>"$RAW"
    log "   r$1 $2: req/s=$3 requests=$4 gen_cpu_s=$cpu server_cpu_s=$scpu"
}

rb() { # ROUND TAG P N
    local f=$OUT/r$1-$2.txt
    SERVER_T0=$(server_ticks)
    cputime "$WORK/cpu" taskset -c 1 redis-benchmark -p "$PORT" -t "$COMMAND" -c 50 -P "$3" \
        -n "$4" -r 10000 -d 3 -q >"$f" 2>&1 || true
    # "SET: 123456.79 requests per second, p50=0.2 msec"
    local rps
    rps=$(tr '\r' '\n' <"$f" | grep -E '^[A-Z]+: [0-9.]+ requests per second' | tail -1 | awk '{print $2}')
    record "$1" "$2" "${rps:-0}" "$4"
}

wb() { # ROUND TAG P N [BINARY [EXTRA FLAG...]]
    local json=$OUT/r$1-$2.json bin=${5:-$WB}
    SERVER_T0=$(server_ticks)
    cputime "$WORK/cpu" taskset -c 1 "$bin" redis "127.0.0.1:$PORT" -t 1 -c 50 --pipeline "$3" \
        -n "$4" --command "$COMMAND" --keyspace 10000 --size 3 -q --json "$json" "${@:6}" \
        >"$OUT/r$1-$2.txt" 2>&1 || true
    local rps
    rps=$(python3 -c "import json;r=json.load(open('$json'));print(r['throughput']['msgs_per_s'] if r['totals']['errors']==0 else 0)")
    record "$1" "$2" "$rps" "$4"
}

for round in $(seq "$ROUNDS"); do
    log "== round $round"
    for p in 1 16; do
        n=$N1; [[ $p == 16 ]] && n=$N16
        start_redis
        rb "$round" "gen_rb_$p" "$p" "$n"
        # With SLIDING, the two modes swap places every other round: neither always
        # runs first after redis-benchmark on the server.
        if [[ -n ${SLIDING:-} && $((round % 2)) == 0 ]]; then
            wb "$round" "gen_wbs_$p" "$p" "$n" "$WB" --pipeline-mode sliding
            wb "$round" "gen_wb_$p" "$p" "$n"
        else
            wb "$round" "gen_wb_$p" "$p" "$n"
            [[ -n ${SLIDING:-} ]] && wb "$round" "gen_wbs_$p" "$p" "$n" "$WB" --pipeline-mode sliding
        fi
        [[ -n ${BEFORE:-} ]] && wb "$round" "gen_wbb_$p" "$p" "$n" "$BEFORE"
        stop_server
        start_redis
        rb "$round" "srv_redis_$p" "$p" "$n"
        stop_server
        start_serve
        rb "$round" "srv_wb_$p" "$p" "$n"
        stop_server
    done
done

python3 - "$RAW" "$OUT/summary.md" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
by = {(r["round"], r["tag"]): r for r in rows}
rounds = sorted({r["round"] for r in rows})
f = lambda r, k: float(r[k])
def stat(v):
    v = [x for x in v if x]
    return f"{statistics.median(v):.2f}x [{min(v):.2f}x-{max(v):.2f}x]" if v else "n/a"
def med(tag, fn):
    v = [fn(by[(x, tag)]) for x in rounds if (x, tag) in by]
    v = [x for x in v if x]
    return f"{statistics.median(v):,.0f} [{min(v):,.0f}-{max(v):,.0f}]" if v else "n/a"
rps = lambda r: f(r, "req_per_s")
per_gen = lambda r: f(r, "requests") / f(r, "gen_cpu_s") if f(r, "gen_cpu_s") else 0
per_srv = lambda r: f(r, "requests") / f(r, "server_cpu_s") if f(r, "server_cpu_s") else 0
lines = ["| measure | median [range] over rounds |", "|---|---|"]
for p in ("1", "16"):
    pairs = [(by.get((x, f"gen_wb_{p}")), by.get((x, f"gen_rb_{p}"))) for x in rounds]
    lines.append(f"| P={p}: wirebench / redis-benchmark req/s | " + stat([rps(a) / rps(b) if a and b and rps(b) else None for a, b in pairs]) + " |")
    lines.append(f"| P={p}: wirebench / redis-benchmark requests per generator CPU-s | " + stat([per_gen(a) / per_gen(b) if a and b and per_gen(b) else None for a, b in pairs]) + " |")
    srv = [(by.get((x, f"srv_wb_{p}")), by.get((x, f"srv_redis_{p}"))) for x in rounds]
    lines.append(f"| P={p}: serve redis / redis-server requests per server CPU-s | " + stat([per_srv(a) / per_srv(b) if a and b and per_srv(b) else None for a, b in srv]) + " |")
    extra = [t for t in (f"gen_wbs_{p}", f"gen_wbb_{p}") if any((x, t) in by for x in rounds)]
    for tag in extra:
        pairs = [(by.get((x, tag)), by.get((x, f"gen_rb_{p}"))) for x in rounds]
        lines.append(f"| P={p}: {tag} / redis-benchmark req/s | " + stat([rps(a) / rps(b) if a and b and rps(b) else None for a, b in pairs]) + " |")
        lines.append(f"| P={p}: {tag} / redis-benchmark requests per generator CPU-s | " + stat([per_gen(a) / per_gen(b) if a and b and per_gen(b) else None for a, b in pairs]) + " |")
    for tag in [f"gen_rb_{p}", f"gen_wb_{p}"] + extra + [f"srv_redis_{p}", f"srv_wb_{p}"]:
        lines.append(f"| {tag}: req/s | {med(tag, rps)} |")
    for tag in [f"gen_rb_{p}", f"gen_wb_{p}"] + extra:
        lines.append(f"| {tag}: requests per generator CPU-s | {med(tag, per_gen)} |")
    for tag in [f"gen_rb_{p}", f"gen_wb_{p}"] + extra:
        lines.append(f"| {tag}: requests per redis-server CPU-s | {med(tag, per_srv)} |")
    for tag in (f"srv_redis_{p}", f"srv_wb_{p}"):
        lines.append(f"| {tag}: requests per server CPU-s | {med(tag, per_srv)} |")
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
EOF
