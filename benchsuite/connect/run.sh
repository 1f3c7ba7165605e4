#!/usr/bin/env bash
# Mass-connection benchmark: wirebench connect against wirebench serve echo, both
# split into worker processes (a process holds at most ~19,990 sockets here).
# The server is pinned to CPU 0 and the client to CPU 1; the server is started
# separately and measured through --server-pid.
#
# It needs about 10 GB of kernel memory for a million connections (both ends on this
# machine): run it ONLY under the exclusive machine lock, after building:
#   cargo build --release
#   flock -x /work/machine.lock bash benchsuite/connect/run.sh
# No sysctl is changed: the limits in force are recorded in $OUT/limits.txt.
#
# Knobs (environment):
#   N=1000000          connections to open and hold
#   HOLD=40s PING=30s  hold time once all are up; each connection pings once per PING
#   CONCURRENCY=4096   connects in flight over all client processes
#   CHURN_ROUNDS=3 CHURN_D=10s   connect-echo-close rounds, each with a fresh server
#   COMPARE_N=100000 COMPARE_ROUNDS=3   against the C reference (c_mass.c), interleaved
#   PORT=19100         listen port (19100 hold, 19101 churn, 19111.. comparisons)
#   OUT=benchsuite/runs/<date>/connect
#   WIREBENCH=path     binary [default: target/release/wirebench]
# Output: $OUT/limits.txt, timeline.txt, hold.{json,stdout,stderr}, hold-server.*,
#         churn-R.*, cmp-R-{a,b,c}.*, summary.md
set -euo pipefail

N=${N:-1000000}
HOLD=${HOLD:-40s}
PING=${PING:-30s}
CONCURRENCY=${CONCURRENCY:-4096}
CHURN_ROUNDS=${CHURN_ROUNDS:-3}
CHURN_D=${CHURN_D:-10s}
COMPARE_N=${COMPARE_N:-100000}
COMPARE_ROUNDS=${COMPARE_ROUNDS:-3}
PORT=${PORT:-19100}
LISTEN=127.0.0.254
SOURCES=127.0.0.2-127.0.0.253

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/../.." && pwd)
OUT=${OUT:-$REPO/benchsuite/runs/$(date +%F)/connect}
WB=${WIREBENCH:-$REPO/target/release/wirebench}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
[ -x "$WB" ] || { echo "run.sh: build first (cargo build --release); no $WB" >&2; exit 2; }

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
# Whatever happens, the server goes (its worker processes die with it: PR_SET_PDEATHSIG).
trap stop_server EXIT

# start_server PROCESSES PORT TAG: starts it pinned to CPU 0, sets SERVER_PID and WORKER_PIDS.
start_server() {
    local procs=$1 port=$2 tag=$3
    taskset -c 0 "$WB" serve echo --listen "$LISTEN:$port" --processes "$procs" --idle-timeout 0 \
        >"$OUT/$tag-server.stdout" 2>"$OUT/$tag-server.stderr" &
    SERVER_PID=$!
    WORKER_PIDS=""
    for _ in $(seq 1 300); do
        if [ "$procs" -gt 1 ]; then
            WORKER_PIDS=$(sed -n 's/^worker pids: //p' "$OUT/$tag-server.stdout")
        elif grep -q "listening on" "$OUT/$tag-server.stdout"; then
            WORKER_PIDS=$SERVER_PID
        fi
        [ -n "$WORKER_PIDS" ] && break
        sleep 0.1
    done
    [ -n "$WORKER_PIDS" ] || { echo "run.sh: the server did not start" >&2; cat "$OUT/$tag-server.stderr" >&2; exit 1; }
}

{
    echo "date: $(date -u +%FT%TZ)"
    echo "kernel: $(uname -r)"
    echo "commit: $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)"
    for k in net.core.somaxconn net.ipv4.tcp_max_syn_backlog fs.file-max fs.nr_open \
             net.ipv4.ip_local_port_range net.ipv4.tcp_max_tw_buckets net.ipv4.tcp_tw_reuse \
             net.ipv4.tcp_mem net.netfilter.nf_conntrack_max net.netfilter.nf_conntrack_count; do
        echo "$k = $(sysctl -n "$k" 2>/dev/null | tr '\t' ' ' || echo absent)"
    done
    echo "ulimit -Hn: $(ulimit -Hn)"
    grep -E '^(MemTotal|MemAvailable|Slab):' /proc/meminfo
} >"$OUT/limits.txt"

stamp() { echo "$(date -u +%T) $*" >>"$OUT/timeline.txt"; }
: >"$OUT/timeline.txt"

# ---- hold: N connections, then ping every one of them
stamp "hold: starting $(( (N + 14999) / 15000 )) server processes"
SERVER_PROCS=$(( (N + 14999) / 15000 ))
start_server "$SERVER_PROCS" "$PORT" hold
stamp "hold: server up; connecting"
set +e
taskset -c 1 "$WB" connect "$LISTEN:$PORT" -n "$N" --source "$SOURCES" \
    --concurrency "$CONCURRENCY" --hold "$HOLD" --ping "$PING" --server-pid "$WORKER_PIDS" \
    --progress 2s --histogram 1000 --json "$OUT/hold.json" >"$OUT/hold.stdout" 2>"$OUT/hold.stderr"
echo "exit $?" >>"$OUT/hold.stdout"
set -e
stamp "hold: client done"
echo "nf_conntrack_count after hold: $(sysctl -n net.netfilter.nf_conntrack_count 2>/dev/null || echo absent)" >>"$OUT/limits.txt"
stop_server
stamp "hold: server stopped"

# ---- churn: connect, one echo, close; a fresh one-process server per round
for r in $(seq 1 "$CHURN_ROUNDS"); do
    start_server 1 $((PORT + 1)) "churn-$r"
    set +e
    taskset -c 1 "$WB" connect "$LISTEN:$((PORT + 1))" --churn -d "$CHURN_D" --source "$SOURCES" \
        --processes 1 --concurrency 256 --json "$OUT/churn-$r.json" \
        >"$OUT/churn-$r.stdout" 2>"$OUT/churn-$r.stderr"
    echo "exit $?" >>"$OUT/churn-$r.stdout"
    set -e
    stop_server
    stamp "churn round $r done"
done

# ---- against a C reference (c_mass.c: the same method in plain C with epoll), at
# COMPARE_N connections, interleaved rounds; each measurement gets a fresh server:
#   a  wirebench serve (cpu0) + wirebench connect (cpu1)
#   b  wirebench serve (cpu0) + C client (cpu1)          -> client ratio (a vs b)
#   c  C server (cpu0)        + wirebench connect (cpu1)  -> server ratio (a vs c), RSS per connection
gcc -O2 -Wall -Wextra -o "$OUT/c_mass" "$SCRIPT_DIR/c_mass.c"
CMP_PROCS=$(( (COMPARE_N + 14999) / 15000 ))
port=$((PORT + 10))
for r in $(seq 1 "$COMPARE_ROUNDS"); do
    for k in a b c; do
        port=$((port + 1))
        tag="cmp-$r-$k"
        if [ "$k" = c ]; then
            taskset -c 0 "$OUT/c_mass" server "$LISTEN" "$port" "$CMP_PROCS" >"$OUT/$tag-server.stdout" 2>&1 &
            SERVER_PID=$!
            for _ in $(seq 1 100); do grep -q "worker pids" "$OUT/$tag-server.stdout" && break; sleep 0.1; done
            WORKER_PIDS=$(sed -n 's/^worker pids: //p' "$OUT/$tag-server.stdout")
        else
            start_server "$CMP_PROCS" "$port" "$tag"
        fi
        set +e
        if [ "$k" = b ]; then
            taskset -c 1 "$OUT/c_mass" client "$LISTEN" "$port" "$COMPARE_N" "$CMP_PROCS" \
                "$CONCURRENCY" 127.0.0.2 252 >"$OUT/$tag.stdout" 2>&1
        else
            taskset -c 1 "$WB" connect "$LISTEN:$port" -n "$COMPARE_N" --source "$SOURCES" \
                --processes "$CMP_PROCS" --concurrency "$CONCURRENCY" --server-pid "$WORKER_PIDS" \
                -q --json "$OUT/$tag.json" >"$OUT/$tag.stdout" 2>&1
        fi
        echo "exit $?" >>"$OUT/$tag.stdout"
        set -e
        stop_server
    done
    stamp "compare round $r done"
done

python3 - "$OUT" "$CHURN_ROUNDS" "$COMPARE_ROUNDS" <<'PY' >"$OUT/summary.md"
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
h = json.load(open(f"{out}/hold.json"))
c, m = h["connect"], h["connect"]["memory"]
print("| figure | value |\n|---|---|")
print(f"| established | {c['established']:,} of {c['requested']:,} (failures: {c['failures'] or 'none'}, lost: {c['lost'] or 'none'}) |")
print(f"| time to all | {c['time_to_establish_s']:.2f} s ({c['connect_rate_per_s']:,.0f} connects/s) |")
print(f"| connect latency p50 / p99 / max | {c['connect_latency_us']['p50']:,.0f} / {c['connect_latency_us']['p99']:,.0f} / {c['connect_latency_us']['max']:,.0f} us |")
print(f"| server RSS per connection | {m['server_rss_per_conn_bytes']:,.0f} bytes ({m['server_processes']} processes) |")
print(f"| client RSS per connection | {m['client_rss_per_conn_bytes']:,.0f} bytes |")
print(f"| kernel slab per connection (both ends) | {m['slab_per_conn_bytes']:,.0f} bytes |")
l, t = h["latency_us"], h["totals"]
print(f"| pings | {t['ok']:,} ok of {t['sent']:,}, no reply {t['in_flight']:,} |")
print(f"| ping latency p50 / p99 / p99.9 / max | {l['p50']:,.0f} / {l['p99']:,.0f} / {l['p99_9']:,.0f} / {l['max']:,.0f} us |")
print(f"| result | {h['outcome']['reason'] or 'ok'} |")
rates = []
for r in range(1, rounds + 1):
    j = json.load(open(f"{out}/churn-{r}.json"))
    rates.append(j["connect"]["churn"]["connections_per_s"])
    print(f"| churn round {r} | {rates[-1]:,.0f} connections/s, setup p99 {j['connect']['connect_latency_us']['p99']:,.0f} us, echo p99 {j['latency_us']['p99']:,.0f} us, {j['outcome']['reason'] or 'ok'} |")
print(f"| churn median [range] | {statistics.median(rates):,.0f} [{min(rates):,.0f}-{max(rates):,.0f}] connections/s |")
import re
cr = int(sys.argv[3])
client, server, wb_mem, c_mem = [], [], [], []
print("\n| round | a: wirebench both (s) | b: C client (s) | c: C server (s) | server RSS/conn wirebench / C (bytes) | result |")
print("|---|---|---|---|---|---|")
for r in range(1, cr + 1):
    a = json.load(open(f"{out}/cmp-{r}-a.json"))
    c = json.load(open(f"{out}/cmp-{r}-c.json"))
    m = re.search(r"established (\d+) failed (\d+) in ([0-9.]+) seconds", open(f"{out}/cmp-{r}-b.stdout").read())
    ta, tc = a["connect"]["time_to_establish_s"], c["connect"]["time_to_establish_s"]
    tb = float(m.group(3))
    ok = a["outcome"]["success"] and c["outcome"]["success"] and m.group(2) == "0"
    client.append(tb / ta)
    server.append(tc / ta)
    wb_mem.append(a["connect"]["memory"]["server_rss_per_conn_bytes"])
    c_mem.append(c["connect"]["memory"]["server_rss_per_conn_bytes"])
    print(f"| {r} | {ta:.3f} | {tb:.3f} | {tc:.3f} | {wb_mem[-1]:,.0f} / {c_mem[-1]:,.0f} | {'ok' if ok else 'FAILURES'} |")
med = statistics.median
print(f"\nclient speed ratio (C client time / wirebench connect time, same wirebench server): {med(client):.2f}x [{min(client):.2f}-{max(client):.2f}]")
print(f"server speed ratio (time against C server / against wirebench server, same wirebench client): {med(server):.2f}x [{min(server):.2f}-{max(server):.2f}]")
print(f"server RSS per connection: wirebench {med(wb_mem):,.0f} bytes, C reference {med(c_mem):,.0f} bytes (medians)")
PY
cat "$OUT/summary.md"
