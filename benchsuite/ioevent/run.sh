#!/usr/bin/env bash
# Event-loop benchmark (the libev/libevent bench.c method): wirebench's
# `ioevent` command with each of its backends against two C references,
# libev_bench.c (libev, epoll) and libevent_bench.c (libevent, epoll).
# Every run is pinned to one CPU with taskset.
#
# Usage: bash benchsuite/ioevent/run.sh        (from anywhere)
# Knobs (environment):
#   ROUNDS=3       interleaved rounds; each round runs every measurement once
#   ITER=25        iterations per run (the first is a warm-up, excluded)
#   OUT=benchsuite/runs/<date>/ioevent   output directory (created)
#   WIREBENCH=path use this wirebench binary instead of cargo build --release
#   CPU=1          CPU to pin every run to
#   BACKENDS="epoll poll uring tokio"   wirebench backends to run
#   RUN_TIMEOUT=300  seconds before a single run is killed (recorded FAIL)
#
# Points (PAIRS, ACTIVE, WRITES): 1000 = 1000/100/1000, 9975 = 9975/100/10000.
# Output: $OUT/raw.tsv, $OUT/*.txt (C stdout), $OUT/*.json (wirebench),
# $OUT/*.stderr, $OUT/summary.md
set -euo pipefail

ROUNDS=${ROUNDS:-3}
ITER=${ITER:-25}
CPU=${CPU:-1}
BACKENDS=${BACKENDS:-epoll poll uring tokio}
RUN_TIMEOUT=${RUN_TIMEOUT:-300}

log() { printf '%s\n' "$*" >&2; }

if ! [[ $ROUNDS =~ ^[0-9]+$ && $ROUNDS -ge 1 ]]; then
    log "run.sh: ROUNDS must be an integer >= 1 (got '$ROUNDS')"; exit 2
fi
if ! [[ $ITER =~ ^[0-9]+$ && $ITER -ge 2 ]]; then
    log "run.sh: ITER must be an integer >= 2 (got '$ITER')"; exit 2
fi

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/../.." && pwd)
OUT=${OUT:-$REPO/benchsuite/runs/$(date +%F)/ioevent}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

ACTIVE=100
POINTS=("1000" "9975")
declare -A PAIRS=([1000]=1000 [9975]=9975)
declare -A WRITES=([1000]=1000 [9975]=10000)

BUILD=$(mktemp -d "${TMPDIR:-/tmp}/wirebench-ioevent.XXXXXX")
cleanup() { rm -rf "$BUILD"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------- deps
have_headers() {
    local h
    for h in ev.h event2/event.h; do
        printf '#include <%s>\n' "$h" | gcc -E -x c - >/dev/null 2>&1 || return 1
    done
}
if ! have_headers; then
    if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
        log "== installing libev-dev libevent-dev (log: $OUT/apt.log)"
        if ! DEBIAN_FRONTEND=noninteractive apt-get install -y libev-dev libevent-dev \
            >"$OUT/apt.log" 2>&1; then
            DEBIAN_FRONTEND=noninteractive apt-get update -qq >>"$OUT/apt.log" 2>&1 || true
            DEBIAN_FRONTEND=noninteractive apt-get install -y libev-dev libevent-dev \
                >>"$OUT/apt.log" 2>&1 || true
        fi
    fi
    if ! have_headers; then
        log "run.sh: libev/libevent headers not found; install libev-dev and libevent-dev"
        exit 1
    fi
fi

# ---------------------------------------------------------------- build
log "== building C references in $BUILD"
gcc -O2 -Wall -Wextra -o "$BUILD/libev_bench" "$SCRIPT_DIR/libev_bench.c" -lev
gcc -O2 -Wall -Wextra -o "$BUILD/libevent_bench" "$SCRIPT_DIR/libevent_bench.c" -levent

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
if [[ $WB_OK == 1 ]] && ! "$WB" ioevent --help >"$OUT/wirebench-ioevent-help.txt" 2>&1; then
    WB_OK=0
    log "!! '$WB ioevent --help' failed; every wirebench measurement is FAIL. Output tail:"
    tail -n 5 "$OUT/wirebench-ioevent-help.txt" >&2 || true
fi

# ---------------------------------------------------------------- helpers
# Results of the last run.
R_TOTAL=FAIL
R_LOOP=FAIL

# run_c KIND POINT TAG: KIND is libev or libevent.
run_c() {
    local kind=$1 point=$2 tag=$3 rc=0 parsed
    local txt=$OUT/$tag.txt err=$OUT/$tag.stderr
    R_TOTAL=FAIL R_LOOP=FAIL
    timeout -k 5 "$RUN_TIMEOUT" taskset -c "$CPU" "$BUILD/${kind}_bench" \
        -n "${PAIRS[$point]}" -a "$ACTIVE" -w "${WRITES[$point]}" -i "$ITER" \
        >"$txt" 2>"$err" || rc=$?
    if [[ $rc != 0 ]]; then
        echo "run.sh: $kind exited with status $rc" >>"$err"
    # every iteration must end with reads == fired == ACTIVE + WRITES
    elif parsed=$(python3 - "$txt" "$((ACTIVE + ${WRITES[$point]}))" "$ITER" <<'EOF' 2>>"$err"
import re, sys
path, want, iters = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
n, med = 0, None
for line in open(path):
    m = re.match(r"iter=\d+ total_us=\S+ loop_us=\S+ reads=(\d+) fired=(\d+)$", line.strip())
    if m:
        n += 1
        if int(m[1]) != want or int(m[2]) != want:
            sys.exit(f"bad iteration: {line.strip()} (want reads=fired={want})")
    m = re.match(r"median_total_us=(\S+) median_loop_us=(\S+)$", line.strip())
    if m:
        med = (float(m[1]), float(m[2]))
if n != iters or med is None:
    sys.exit(f"expected {iters} iteration lines and a median line, got {n} and {med}")
print(med[0], med[1])
EOF
    ); then
        read -r R_TOTAL R_LOOP <<<"$parsed"
    fi
    if [[ $R_TOTAL == FAIL ]]; then
        log "!! $kind failed ($tag); stderr tail:"
        tail -n 20 "$err" >&2 || true
    fi
}

# run_wb BACKEND POINT TAG
run_wb() {
    local backend=$1 point=$2 tag=$3 rc=0 parsed
    local json=$OUT/$tag.json err=$OUT/$tag.stderr
    R_TOTAL=FAIL R_LOOP=FAIL
    [[ $WB_OK == 1 ]] || return 0
    rm -f "$json"
    timeout -k 5 "$RUN_TIMEOUT" taskset -c "$CPU" "$WB" ioevent \
        -n "${PAIRS[$point]}" -a "$ACTIVE" -w "${WRITES[$point]}" \
        --iterations "$ITER" --backend "$backend" --quiet --json "$json" \
        >"$OUT/$tag.stdout" 2>"$err" || rc=$?
    if [[ $rc != 0 ]]; then
        echo "run.sh: wirebench exited with status $rc" >>"$err"
    elif [[ ! -s "$json" ]]; then
        echo "run.sh: wirebench exited 0 but wrote no $json" >>"$err"
    elif parsed=$(python3 - "$json" "$backend" "$((ACTIVE + ${WRITES[$point]}))" <<'EOF' 2>>"$err"
import json, sys
path, backend, want = sys.argv[1], sys.argv[2], int(sys.argv[3])
r = json.load(open(path))["results"][0]
if r.get("backend") not in (None, backend):
    print(f"run.sh: warning: JSON backend is {r.get('backend')!r}, asked for {backend!r}",
          file=sys.stderr)
for i, it in enumerate(r.get("iterations", []), 1):
    if it.get("reads") != want or it.get("fired") != want:
        sys.exit(f"bad iteration {i}: reads={it.get('reads')} fired={it.get('fired')} "
                 f"(want {want})")
s = r["summary"]
print(float(s["total_us"]["median"]), float(s["loop_us"]["median"]))
EOF
    ); then
        read -r R_TOTAL R_LOOP <<<"$parsed"
    fi
    if [[ $R_TOTAL == FAIL ]]; then
        log "!! wirebench ioevent --backend $backend failed ($tag); stderr tail:"
        tail -n 20 "$err" >&2 || true
    fi
}

RAW=$OUT/raw.tsv
printf 'round\tpoint\timpl\tmedian_total_us\tmedian_loop_us\n' >"$RAW"
record() { # ROUND POINT IMPL
    printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$R_TOTAL" "$R_LOOP" >>"$RAW"
    log "   r$1 $2 $3: total_us=$R_TOTAL loop_us=$R_LOOP"
}

# ---------------------------------------------------------------- measure
log "== ROUNDS=$ROUNDS ITER=$ITER CPU=$CPU BACKENDS='$BACKENDS' OUT=$OUT"
for ((round = 1; round <= ROUNDS; round++)); do
    log "== round $round/$ROUNDS"
    for point in "${POINTS[@]}"; do
        for kind in libev libevent; do
            run_c "$kind" "$point" "r${round}_${point}_${kind}"
            record "$round" "$point" "$kind"
        done
        for backend in $BACKENDS; do
            run_wb "$backend" "$point" "r${round}_${point}_wirebench-${backend}"
            record "$round" "$point" "wirebench-$backend"
        done
    done
done

# ---------------------------------------------------------------- summary
VERSIONS=$(head -qn 1 "$OUT"/r1_*_libev.stderr "$OUT"/r1_*_libevent.stderr 2>/dev/null \
    | sed -n 's/^\(lib[a-z]* [^ ]* backend=[a-z]*\).*/\1/p' | sort -u | paste -sd ';' - || true)
python3 - "$RAW" "$OUT/summary.md" "$ROUNDS" "$ITER" "$CPU" "$VERSIONS" <<'EOF'
import csv, os, platform, statistics, sys, time
raw, out, rounds, iters, cpu, versions = sys.argv[1:7]
rows = list(csv.DictReader(open(raw), delimiter="\t"))

def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None

data = {}  # (point, impl) -> {round: (total, loop)}
impls, points = [], []
for r in rows:
    if r["impl"] not in impls:
        impls.append(r["impl"])
    if r["point"] not in points:
        points.append(r["point"])
    data.setdefault((r["point"], r["impl"]), {})[int(r["round"])] = (
        num(r["median_total_us"]), num(r["median_loop_us"]))
rnds = sorted({int(r["round"]) for r in rows})

def get(point, impl, rnd, k):
    v = data.get((point, impl), {}).get(rnd)
    return v[k] if v else None

def div(x, y):
    return x / y if x is not None and y not in (None, 0) else None

def stat(vals, fmt):
    ok = [v for v in vals if v is not None]
    if not ok:
        return "FAIL", ""
    return fmt(statistics.median(ok)), f"[{fmt(min(ok))}..{fmt(max(ok))}]"

def ok_count(vals):
    return f"{sum(v is not None for v in vals)}/{len(vals)}"

us = lambda v: f"{v:,.1f}"
ratio = lambda v: f"{v:.3f}"
labels = {"1000": "1000 (-n 1000 -a 100 -w 1000)", "9975": "9975 (-n 9975 -a 100 -w 10000)"}

L = []
L.append("# ioevent benchmark: wirebench vs libev / libevent")
L.append("")
L.append(f"- date: {time.strftime('%Y-%m-%d %H:%M:%S %z')}")
L.append(f"- host: {platform.node()}, kernel {platform.release()}, {os.cpu_count()} CPUs")
L.append(f"- C references: {versions or 'unknown'}")
L.append(f"- rounds: {rounds} (interleaved), {iters} iterations per run (the first is a "
         f"warm-up and excluded), every run pinned to CPU {cpu}")
L.append("- each value is the per-run median over iterations; below: median and "
         "[min..max] of those over rounds, in microseconds")
L.append("- total_us: re-arm all watchers + one pass + first writes + event processing; "
         "loop_us: event processing only")
L.append("")
L.append("## Times")
L.append("")
L.append("| point | impl | total_us median | total_us range | loop_us median | loop_us range | ok |")
L.append("|---|---|---:|---:|---:|---:|---:|")
for p in points:
    for impl in impls:
        t = [get(p, impl, r, 0) for r in rnds]
        lo = [get(p, impl, r, 1) for r in rnds]
        L.append(f"| {labels.get(p, p)} | {impl} | " + " | ".join(stat(t, us)) + " | "
                 + " | ".join(stat(lo, us)) + f" | {ok_count(t)} |")
L.append("")
L.append("## Ratios vs libev (impl time / libev time, same round; > 1 means slower than libev)")
L.append("")
L.append("| point | impl | total median | total range | total per round | "
         "loop median | loop range | loop per round |")
L.append("|---|---|---:|---:|---|---:|---:|---|")
for p in points:
    for impl in impls:
        if impl == "libev":
            continue
        cells = []
        for k in (0, 1):
            vals = [div(get(p, impl, r, k), get(p, "libev", r, k)) for r in rnds]
            cells += list(stat(vals, ratio))
            cells.append(", ".join("FAIL" if v is None else ratio(v) for v in vals))
        L.append(f"| {labels.get(p, p)} | {impl} | " + " | ".join(cells) + " |")
text = "\n".join(L) + "\n"
open(out, "w").write(text)
print(text, end="")
EOF
find "$OUT" -maxdepth 1 -type f \( -name '*.stderr' -o -name '*.stdout' \) -empty -delete
log "== results in $OUT"
