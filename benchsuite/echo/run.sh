#!/usr/bin/env bash
# Echo benchmark: wirebench's TCP echo client and server against a C
# reference pair (c_echo_server.c / c_echo_client.c), on loopback, with the
# server pinned to CPU 0 and the load generator pinned to CPU 1.
#
# Usage: bash benchsuite/echo/run.sh        (from anywhere)
# Knobs (environment):
#   ROUNDS=3      interleaved rounds; each round runs every measurement once
#   DURATION=5    measured seconds per run
#   WARMUP=1      warm-up seconds per run (not counted)
#   OUT=benchsuite/runs/<date>/echo   output directory (created)
#   BASE_PORT=9200  first port; every server start uses the next one
#   WIREBENCH=path  use this wirebench binary instead of cargo build --release
#
# Per round, for each point P in 10x1 and 100x16 (connections x in flight),
# 64-byte messages:
#   a  C server (cpu0)         + C client (cpu1)           baseline
#   b  C server (cpu0)         + wirebench echo (cpu1)     client comparison
#   c  wirebench serve (cpu0)  + C client (cpu1)           server comparison
# and once per round (100x16):
#   d  wirebench echo without a target (client and server in one process,
#      CPUs 0,1)
# Output: $OUT/raw.tsv, $OUT/server_cpu.tsv (server CPU under a and c), $OUT/*.json,
#         $OUT/*.stderr, $OUT/summary.md
set -euo pipefail

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-5}
WARMUP=${WARMUP:-1}
BASE_PORT=${BASE_PORT:-9200}

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/../.." && pwd)
OUT=${OUT:-$REPO/benchsuite/runs/$(date +%F)/echo}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

HOST=127.0.0.1
MSG_SIZE=64          # bytes on the wire per message
WB_PAYLOAD=36        # wirebench echo frame = 28-byte header + payload = 64
POINTS=("10x1" "100x16")

BUILD=$(mktemp -d "${TMPDIR:-/tmp}/wirebench-echo.XXXXXX")
SERVER_PID=""
cleanup() {
    if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill -TERM "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    rm -rf "$BUILD"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { printf '%s\n' "$*" >&2; }

# ---------------------------------------------------------------- build
log "== building C reference pair in $BUILD"
gcc -O2 -Wall -Wextra -o "$BUILD/c_echo_server" "$SCRIPT_DIR/c_echo_server.c"
gcc -O2 -Wall -Wextra -o "$BUILD/c_echo_client" "$SCRIPT_DIR/c_echo_client.c"
C_SERVER=$BUILD/c_echo_server
C_CLIENT=$BUILD/c_echo_client

WB_OK=1
if [[ -n "${WIREBENCH:-}" ]]; then
    WB=$WIREBENCH
    log "== using WIREBENCH=$WB (no cargo build)"
else
    WB=${CARGO_TARGET_DIR:-$REPO/target}/release/wirebench
    log "== cargo build --release (log: $OUT/cargo-build.log)"
    if ! (cd "$REPO" && cargo build --release) >"$OUT/cargo-build.log" 2>&1; then
        WB_OK=0
        log "!! cargo build --release failed; every wirebench measurement is FAIL. Log tail:"
        tail -n 20 "$OUT/cargo-build.log" >&2 || true
    fi
fi
if [[ $WB_OK == 1 && ! -x "$WB" ]]; then
    WB_OK=0
    log "!! $WB is not executable; every wirebench measurement is FAIL"
fi

# Runs a command, writes "user_s sys_s wall_s" of it (and its children) to
# the file given as first argument, exits with the command's status.
cat >"$BUILD/cputime.py" <<'EOF'
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
cputime() { python3 "$BUILD/cputime.py" "$@"; }

# ---------------------------------------------------------------- helpers
PORT=$BASE_PORT
next_port() { PORT=$((PORT + 1)); }

# wait_port PORT PID: up to 5 s for a TCP accept on HOST:PORT while PID lives.
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

# start_server KIND LOGFILE: KIND is c or wb; sets SERVER_PID, uses $PORT.
start_server() {
    local kind=$1 errf=$2
    if [[ $kind == c ]]; then
        taskset -c 0 "$C_SERVER" "$HOST" "$PORT" 2>"$errf" &
    else
        taskset -c 0 "$WB" serve echo --listen "$HOST:$PORT" --threads 1 \
            >/dev/null 2>"$errf" &
    fi
    SERVER_PID=$!
    if ! wait_port "$PORT" "$SERVER_PID"; then
        log "!! $kind server on port $PORT did not come up within 5 s; stderr tail:"
        tail -n 20 "$errf" >&2 || true
        stop_server
        return 1
    fi
}

stop_server() {
    local pid=$SERVER_PID i
    [[ -n "$pid" ]] || return 0
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    SERVER_PID=""
}

# Results of the last client run.
R_MPS=FAIL
R_CPU=FAIL
R_WALL=FAIL

read_cpu() { # FILE -> R_CPU, R_WALL
    local u s w
    if read -r u s w <"$1" 2>/dev/null; then
        R_CPU=$(python3 -c "print(f'{$u + $s:.3f}')")
        R_WALL=$w
    fi
}

# run_c_client CONNS DEPTH TAG
run_c_client() {
    local conns=$1 depth=$2 tag=$3 line
    R_MPS=FAIL R_CPU=FAIL R_WALL=FAIL
    if line=$(cputime "$BUILD/cpu" taskset -c 1 "$C_CLIENT" "$HOST" "$PORT" \
        "$conns" "$depth" "$MSG_SIZE" "$DURATION" "$WARMUP" 2>"$OUT/$tag.stderr"); then
        echo "$line" >"$OUT/$tag.txt"
        R_MPS=$(sed -n 's/^msgs_per_s=\([0-9.]*\) .*/\1/p' <<<"$line")
        [[ -n "$R_MPS" ]] || R_MPS=FAIL
        read_cpu "$BUILD/cpu"
    fi
    if [[ $R_MPS == FAIL ]]; then
        log "!! C client failed ($tag); stderr tail:"
        tail -n 20 "$OUT/$tag.stderr" >&2 || true
    fi
}

# json_mps FILE -> msgs/s on stdout
json_mps() {
    python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["throughput"]["msgs_per_s"])' "$1"
}

# run_wb TAG CPUS [wirebench echo args...]
run_wb() {
    local tag=$1 cpus=$2 json=$OUT/$1.json
    shift 2
    R_MPS=FAIL R_CPU=FAIL R_WALL=FAIL
    if [[ $WB_OK != 1 ]]; then
        return 0
    fi
    rm -f "$json"
    if cputime "$BUILD/cpu" taskset -c "$cpus" "$WB" echo "$@" \
        -d "${DURATION}s" --warmup "${WARMUP}s" --quiet --json "$json" \
        >"$OUT/$tag.stdout" 2>"$OUT/$tag.stderr"; then
        if [[ ! -s "$json" ]]; then
            echo "run.sh: wirebench exited 0 but wrote no $json" >>"$OUT/$tag.stderr"
        elif R_MPS=$(json_mps "$json" 2>>"$OUT/$tag.stderr"); then
            read_cpu "$BUILD/cpu"
        else
            R_MPS=FAIL
        fi
    else
        echo "run.sh: wirebench exited with status $?" >>"$OUT/$tag.stderr"
    fi
    if [[ $R_MPS == FAIL ]]; then
        log "!! wirebench echo failed ($tag); stderr tail:"
        tail -n 20 "$OUT/$tag.stderr" >&2 || true
    fi
}

RAW=$OUT/raw.tsv
printf 'round\tpoint\twhat\tmsgs_per_s\tcpu_s\twall_s\n' >"$RAW"
record() { # ROUND POINT WHAT
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$R_MPS" "$R_CPU" "$R_WALL" >>"$RAW"
    log "   r$1 $2 $3: msgs/s=$R_MPS cpu_s=$R_CPU wall_s=$R_WALL"
}

# The server's CPU (user + system, /proc/PID/stat) while a C client runs against it
# (a: the C server, c: wirebench's), for messages per server CPU-second:
# server_cpu.tsv (round, point, what, server_cpu_s, wall_s).
SRV_CPU=$OUT/server_cpu.tsv
printf 'round\tpoint\twhat\tserver_cpu_s\twall_s\n' >"$SRV_CPU"
TICK=$(getconf CLK_TCK)
server_ticks() { awk '{print $14 + $15}' "/proc/$SERVER_PID/stat" 2>/dev/null || echo 0; }
server_cpu_from() { S_T0=$(server_ticks); S_W0=$(date +%s.%N); }
server_cpu_record() { # ROUND POINT WHAT
    local t1 w1
    t1=$(server_ticks) w1=$(date +%s.%N)
    python3 -c "print('$1\t$2\t$3\t%.3f\t%.3f' % (($t1 - $S_T0) / $TICK, $w1 - $S_W0))" >>"$SRV_CPU"
}

# ---------------------------------------------------------------- measure
log "== ROUNDS=$ROUNDS DURATION=${DURATION}s WARMUP=${WARMUP}s OUT=$OUT"
for ((round = 1; round <= ROUNDS; round++)); do
    log "== round $round/$ROUNDS"
    for point in "${POINTS[@]}"; do
        conns=${point%x*}
        depth=${point#*x}

        # a + b: C server
        next_port
        tag=r${round}_${point}
        if start_server c "$OUT/${tag}_c_server.stderr"; then
            server_cpu_from
            run_c_client "$conns" "$depth" "${tag}_a"
            server_cpu_record "$round" "$point" a
            record "$round" "$point" a
            run_wb "${tag}_b" 1 "$HOST:$PORT" -t 1 -c "$conns" \
                --pipeline "$depth" --size "$WB_PAYLOAD"
            record "$round" "$point" b
            stop_server
        else
            R_MPS=FAIL R_CPU=FAIL R_WALL=FAIL
            record "$round" "$point" a
            record "$round" "$point" b
        fi

        # c: wirebench server
        next_port
        R_MPS=FAIL R_CPU=FAIL R_WALL=FAIL
        if [[ $WB_OK == 1 ]] && start_server wb "$OUT/${tag}_wb_server.stderr"; then
            server_cpu_from
            run_c_client "$conns" "$depth" "${tag}_c"
            server_cpu_record "$round" "$point" c
            stop_server
        fi
        record "$round" "$point" c
    done

    # d: wirebench client and server in one process
    run_wb "r${round}_100x16_d" 0,1 -c 100 --pipeline 16 --size "$WB_PAYLOAD"
    record "$round" 100x16 d
done

# ---------------------------------------------------------------- summary
python3 - "$RAW" "$OUT/summary.md" "$ROUNDS" "$DURATION" "$WARMUP" <<'EOF'
import csv, os, platform, statistics, sys, time
raw, out, rounds, duration, warmup = sys.argv[1:6]
rows = list(csv.DictReader(open(raw), delimiter="\t"))

def num(v):
    try:
        return float(v)
    except ValueError:
        return None

data = {}  # (point, what) -> {round: row}
for r in rows:
    data.setdefault((r["point"], r["what"]), {})[int(r["round"])] = r

def mps(point, what, rnd):
    r = data.get((point, what), {}).get(rnd)
    return num(r["msgs_per_s"]) if r else None

def per_cpu(point, what, rnd):
    # messages per generator CPU-second: throughput / average CPU use of the
    # generator process over its lifetime (cpu_s / wall_s)
    r = data.get((point, what), {}).get(rnd)
    if not r:
        return None
    m, c, w = num(r["msgs_per_s"]), num(r["cpu_s"]), num(r["wall_s"])
    if None in (m, c, w) or c <= 0:
        return None
    return m * w / c

rnds = sorted({int(r["round"]) for r in rows})

def stat(vals, fmt):
    ok = [v for v in vals if v is not None]
    n = f"{len(ok)}/{len(vals)}"
    if not ok:
        return ["FAIL", "", "", n]
    return [fmt(statistics.median(ok)), fmt(min(ok)), fmt(max(ok)), n]

big = lambda v: f"{v:,.0f}"
ratio = lambda v: f"{v:.3f}"

def div(x, y):
    return x / y if x is not None and y not in (None, 0) else None

lines = []
lines.append("# Echo benchmark: wirebench vs C reference")
lines.append("")
lines.append(f"- date: {time.strftime('%Y-%m-%d %H:%M:%S %z')}")
lines.append(f"- host: {platform.node()}, kernel {platform.release()}, {os.cpu_count()} CPUs")
lines.append(f"- rounds: {rounds}, duration {duration} s, warm-up {warmup} s, 64-byte messages, loopback")
lines.append("- a: C server (cpu0) + C client (cpu1); b: C server + wirebench client; "
             "c: wirebench server + C client; d: wirebench client+server in one process (cpus 0,1)")
lines.append("- b/a and c/a are computed per round; msgs per CPU-s = msgs/s / (generator cpu_s / wall_s)")
lines.append("")
lines.append("| point | metric | median | min | max | ok |")
lines.append("|---|---|---:|---:|---:|---:|")
labels = {
    "a": "a: C server + C client, msgs/s",
    "b": "b: C server + wirebench client, msgs/s",
    "c": "c: wirebench server + C client, msgs/s",
    "d": "d: wirebench in-process, msgs/s",
}
for point in ("10x1", "100x16"):
    for what in ("a", "b", "c", "d"):
        if (point, what) not in data:
            continue
        lines.append(f"| {point} | {labels[what]} | " +
                     " | ".join(stat([mps(point, what, r) for r in rnds], big)) + " |")
    lines.append(f"| {point} | b/a (client) | " + " | ".join(
        stat([div(mps(point, "b", r), mps(point, "a", r)) for r in rnds], ratio)) + " |")
    lines.append(f"| {point} | c/a (server) | " + " | ".join(
        stat([div(mps(point, "c", r), mps(point, "a", r)) for r in rnds], ratio)) + " |")
    for what, name in (("a", "C client"), ("b", "wirebench client")):
        lines.append(f"| {point} | {what}: msgs per {name} CPU-s | " + " | ".join(
            stat([per_cpu(point, what, r) for r in rnds], big)) + " |")
text = "\n".join(lines) + "\n"
open(out, "w").write(text)
print(text, end="")
EOF
find "$OUT" -maxdepth 1 -type f \( -name '*.stderr' -o -name '*.stdout' \) -empty -delete
log "== results in $OUT"
