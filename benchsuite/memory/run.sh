#!/usr/bin/env bash
# Memory flat in run length: the load generator's peak RSS (VmHWM) after a long run
# must be at most 1.1x its peak after a short one. A generator that keeps anything per
# request (a buffer that grows, a list of samples, a leak) fails this.
#
# For each of `wirebench echo` and `wirebench http`, against the matching built-in
# server started separately as `wirebench serve echo|http` (server pinned to CPU 0,
# generator to CPU 1), run the generator for SHORT and then LONG requests and record
# its VmHWM at exit: `/usr/bin/time -f %M` reports ru_maxrss, which the kernel keeps
# equal to VmHWM; /proc/PID/status is sampled every 100 ms too, as a cross-check.
#
# Usage: bash benchsuite/memory/run.sh      (from anywhere; run it under
#        flock -x /work/locks/bench.lock on a shared machine)
# Knobs (environment):
#   SHORT=100000  LONG=10000000   requests per run
#   CONNS=20  PIPELINE=8          connections and requests in flight per connection
#   LIMIT=1.10                    allowed ratio LONG/SHORT peak RSS
#   OUT=benchsuite/runs/<date>/memory   output directory (created)
#   WIREBENCH=path                this binary instead of target/release/wirebench
# Output: $OUT/raw.tsv (protocol, requests, time_maxrss_kib, sampled_vmhwm_kib,
# seconds, ok), $OUT/<proto>-<n>.json and .stderr, $OUT/summary.md. Exit 1 if any
# ratio is above LIMIT or a run was not clean.
set -euo pipefail

SHORT=${SHORT:-100000}
LONG=${LONG:-10000000}
CONNS=${CONNS:-20}
PIPELINE=${PIPELINE:-8}
LIMIT=${LIMIT:-1.10}

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/../.." && pwd)
OUT=${OUT:-$REPO/benchsuite/runs/$(date +%F)/memory}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
WB=${WIREBENCH:-${CARGO_TARGET_DIR:-$REPO/target}/release/wirebench}
[[ -x "$WB" ]] || { echo "memory/run.sh: $WB is not built (cargo build --release)" >&2; exit 2; }

SERVER_PID=""
stop_server() {
    if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill -TERM "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    SERVER_PID=""
}
trap stop_server EXIT
trap 'exit 130' INT TERM

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# start_server PROTO: serve PROTO on a free loopback port, pinned to CPU 0; sets PORT.
start_server() {
    PORT=$(free_port)
    taskset -c 0 "$WB" serve "$1" --listen "127.0.0.1:$PORT" --threads 1 \
        >"$OUT/serve-$1.stdout" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 100); do
        grep -q "listening on" "$OUT/serve-$1.stdout" 2>/dev/null && return 0
        sleep 0.1
    done
    echo "memory/run.sh: wirebench serve $1 did not start" >&2
    exit 1
}

# measure PROTO N TARGET: one generator run of N requests on CPU 1; appends to raw.tsv.
measure() {
    local proto=$1 n=$2 target=$3 base="$OUT/$1-$2"
    local start end pid hwm=0 h
    start=$(date +%s.%N)
    taskset -c 1 /usr/bin/time -f "%M" -o "$base.maxrss" \
        "$WB" "$proto" "$target" -t 1 -c "$CONNS" --pipeline "$PIPELINE" -n "$n" \
        --json "$base.json" -q >"$base.stdout" 2>"$base.stderr" &
    pid=$!
    # The generator is the child of `time`; sample its VmHWM while it runs.
    while kill -0 "$pid" 2>/dev/null; do
        for c in $(pgrep -P "$pid" 2>/dev/null); do
            h=$(awk '/^VmHWM:/ {print $2}' "/proc/$c/status" 2>/dev/null || true)
            [[ -n "$h" && "$h" -gt "$hwm" ]] && hwm=$h
        done
        sleep 0.1
    done
    wait "$pid" || true
    end=$(date +%s.%N)
    local ok
    ok=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); t=d["totals"]; print(t["ok"] if t["errors"]==0 else -1)' "$base.json")
    printf '%s\t%s\t%s\t%s\t%.1f\t%s\n' "$proto" "$n" "$(cat "$base.maxrss")" "$hwm" \
        "$(echo "$end - $start" | bc)" "$ok" >>"$OUT/raw.tsv"
}

printf 'protocol\trequests\ttime_maxrss_kib\tsampled_vmhwm_kib\tseconds\tok\n' >"$OUT/raw.tsv"
for proto in echo http; do
    start_server "$proto"
    if [[ $proto == echo ]]; then target="127.0.0.1:$PORT"; else target="http://127.0.0.1:$PORT/"; fi
    measure "$proto" "$SHORT" "$target"
    measure "$proto" "$LONG" "$target"
    stop_server
done

python3 - "$OUT" "$SHORT" "$LONG" "$LIMIT" <<'PY'
import sys
out, short, long_, limit = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
rows = [l.rstrip("\n").split("\t") for l in open(f"{out}/raw.tsv")][1:]
by = {(r[0], int(r[1])): r for r in rows}
lines = ["| generator | peak RSS after %d (KiB) | after %d (KiB) | ratio | limit | verdict |" % (short, long_),
         "|---|---|---|---|---|---|"]
bad = False
for proto in ("echo", "http"):
    s, l = by[(proto, short)], by[(proto, long_)]
    ratio = int(l[2]) / int(s[2])
    clean = int(s[5]) == short and int(l[5]) == long_
    ok = ratio <= limit and clean
    bad |= not ok
    lines.append("| wirebench %s | %s | %s | %.3f | %.2f | %s |" % (
        proto, s[2], l[2], ratio, limit, "flat" if ok else ("NOT FLAT" if clean else "RUN NOT CLEAN")))
text = "\n".join(lines) + "\n"
open(f"{out}/summary.md", "w").write(text)
print(text, end="")
sys.exit(1 if bad else 0)
PY
