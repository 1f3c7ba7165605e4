#!/usr/bin/env bash
# Connect defaults: time to 1,000,000 established connections with the plain command
# (no tuning flags) against the C reference, one round per call (so that each run of
# this script holds the machine for under ~3 minutes; call it ROUNDS times, interleaved
# by construction: a b c within a round):
#   a  wirebench serve echo --processes 67 (CPU 0) + wirebench connect HOST:PORT -n N (CPU 1)
#   b  c_mass server (CPU 0)                      + c_mass client, 67 processes, 4096 in
#      flight, 254 sources 127.0.0.2.. (CPU 1): the C reference of run.sh at N
#   c  c_mass server (CPU 0)                      + the plain wirebench command (CPU 1):
#      the same client against the C server, which shows how much of (a) is the server
# Memory per connection on both sides comes from (a)'s JSON (server RSS through
# --server-pid, client worker RSS, kernel slab).
#
# It needs ~10 GB of kernel memory and both CPUs: run it ONLY under the exclusive lock,
#   flock -x /work/locks/bench.lock bash benchsuite/connect/defaults.sh 1   (then 2, 3)
# and summarize with: bash benchsuite/connect/defaults.sh summary
# Knobs: N=1000000 PORT=19600 OUT=benchsuite/runs/<date>/connect-defaults
#        WIREBENCH=path [default: target/release/wirebench, else target/ci/wirebench]
set -euo pipefail

N=${N:-1000000}
PORT=${PORT:-19600}
HOST=127.0.0.1
SERVER_PROCS=$(( (N + 14999) / 15000 ))   # serve echo: ~15,000 connections a process (docs/connect.md)
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/../.." && pwd)
OUT=${OUT:-$REPO/benchsuite/runs/$(date +%F)/connect-defaults}
WB=${WIREBENCH:-$REPO/target/release/wirebench}
[ -x "$WB" ] || WB=$REPO/target/ci/wirebench
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
ROUND=${1:?usage: defaults.sh ROUND|summary}

if [ "$ROUND" = summary ]; then
python3 - "$OUT" <<'PY'
import json, glob, re, statistics, sys, os
out = sys.argv[1]
rounds = sorted({int(re.search(r"r(\d+)-", os.path.basename(p)).group(1)) for p in glob.glob(f"{out}/r*-a.json")})
ta, tb, tc, srv, cli, slab = [], [], [], [], [], []
print("| round | a: wirebench both, plain command (s) | b: C both (s) | c: C server + plain wirebench client (s) | a: failures | server / client RSS per connection (a) | slab per connection (a) |")
print("|---|---|---|---|---|---|---|")
for r in rounds:
    a = json.load(open(f"{out}/r{r}-a.json")); c = json.load(open(f"{out}/r{r}-c.json"))
    m = re.search(r"established (\d+) failed (\d+) in ([0-9.]+) seconds", open(f"{out}/r{r}-b.stdout").read())
    ca, mem = a["connect"], a["connect"]["memory"]
    ta.append(ca["time_to_establish_s"]); tb.append(float(m.group(3))); tc.append(c["connect"]["time_to_establish_s"])
    srv.append(mem["server_rss_per_conn_bytes"]); cli.append(mem["client_rss_per_conn_bytes"]); slab.append(mem["slab_per_conn_bytes"])
    fails = f"{ca['failed']} failed, lost {sum(ca['lost'].values())}; {ca['established']:,} established"
    print(f"| {r} | {ta[-1]:.2f} | {tb[-1]:.2f} (failed {m.group(2)}) | {tc[-1]:.2f} | {fails} | {srv[-1]:,.0f} / {cli[-1]:,.0f} bytes | {slab[-1]:,.0f} bytes |")
med = statistics.median
rng = lambda v: f"{med(v):.2f} s [{min(v):.2f}-{max(v):.2f}]"
print(f"\nplain wirebench (a): {rng(ta)}; C reference (b): {rng(tb)}; plain client vs C server (c): {rng(tc)}")
ratio = [b / a for a, b in zip(ta, tb)]
print(f"C time / wirebench time (same round): {med(ratio):.2f}x [{min(ratio):.2f}-{max(ratio):.2f}]")
print(f"memory per connection (a, medians): server {med(srv):,.0f} bytes, client {med(cli):,.0f} bytes, kernel slab {med(slab):,.0f} bytes (both ends)")
a0 = json.load(open(f"{out}/r{rounds[0]}-a.json"))
print(f"chosen (a): {a0['config']['chosen']['line']}")
PY
exit 0
fi

gcc -O2 -Wall -Wextra -o "$OUT/c_mass" "$SCRIPT_DIR/c_mass.c"
stamp() { echo "$(date -u +%T) round $ROUND: $*" >>"$OUT/timeline.txt"; }
{
    echo "round $ROUND date: $(date -u +%FT%TZ) commit: $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null) binary: $WB"
    for k in net.core.somaxconn net.ipv4.tcp_max_syn_backlog net.ipv4.ip_local_port_range; do
        echo "  $k = $(sysctl -n "$k" | tr '\t' ' ')"
    done
    echo "  ulimit -Hn: $(ulimit -Hn); $(grep -E '^MemAvailable:' /proc/meminfo)"
} >>"$OUT/limits.txt"

SERVER_PID=""
stop_server() {
    if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill -INT "$SERVER_PID"
        for _ in $(seq 1 600); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$SERVER_PID" 2>/dev/null || true
    fi
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
}
trap stop_server EXIT

# start SERVER TAG PORT: wirebench or C server on CPU 0; sets SERVER_PID and WORKER_PIDS.
start() {
    local kind=$1 tag=$2 port=$3
    if [ "$kind" = wb ]; then
        taskset -c 0 "$WB" serve echo --listen "$HOST:$port" --processes "$SERVER_PROCS" \
            >"$OUT/$tag-server.stdout" 2>"$OUT/$tag-server.stderr" &
    else
        taskset -c 0 "$OUT/c_mass" server "$HOST" "$port" "$SERVER_PROCS" >"$OUT/$tag-server.stdout" 2>&1 &
    fi
    SERVER_PID=$!
    WORKER_PIDS=""
    for _ in $(seq 1 300); do
        WORKER_PIDS=$(sed -n 's/^worker pids: //p' "$OUT/$tag-server.stdout")
        [ -n "$WORKER_PIDS" ] && break
        sleep 0.1
    done
    [ -n "$WORKER_PIDS" ] || { echo "defaults.sh: the $kind server did not start" >&2; exit 1; }
}

port=$((PORT + 10 * ROUND))
for k in a b c; do
    port=$((port + 1))
    tag="r$ROUND-$k"
    if [ "$k" = a ]; then start wb "$tag" "$port"; else start c "$tag" "$port"; fi
    stamp "$k: server up ($SERVER_PROCS processes)"
    set +e
    if [ "$k" = b ]; then
        timeout -s INT 120 taskset -c 1 "$OUT/c_mass" client "$HOST" "$port" "$N" "$SERVER_PROCS" 4096 127.0.0.2 254 \
            >"$OUT/$tag.stdout" 2>&1
    else
        # The plain command; --server-pid and --json only measure and record.
        timeout -s INT 120 taskset -c 1 "$WB" connect "$HOST:$port" -n "$N" --server-pid "$WORKER_PIDS" \
            --progress 1s --json "$OUT/$tag.json" >"$OUT/$tag.stdout" 2>"$OUT/$tag.stderr"
    fi
    echo "exit $?" >>"$OUT/$tag.stdout"
    set -e
    stamp "$k: client done"
    stop_server
    stamp "$k: server stopped"
done
