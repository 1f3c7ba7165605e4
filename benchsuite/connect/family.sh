#!/usr/bin/env bash
# connect before/after a change to its own code: the churn rate and an N-connection
# hold (default 100,000), each binary's `connect` against the same server (the first
# binary's `serve echo`, started fresh for each run), rounds interleaved, the order
# rotating by round:
#   taskset -c 0 FIRST serve echo --listen 127.0.0.1:PORT --processes P --idle-timeout 0
#   taskset -c 1 BINARY connect 127.0.0.1:PORT -n N --server-pid PIDS -q --json
#   taskset -c 0 FIRST serve echo --listen 127.0.0.1:PORT
#   taskset -c 1 BINARY connect 127.0.0.1:PORT --churn -d D -q --json
# Figures from each JSON: hold: time to all established, client CPU, client RSS per
# connection; churn: cycles ok per second, client CPU.
#
# Run it ONLY under the exclusive lock:
#   flock -x /work/locks/bench.lock bash benchsuite/connect/family.sh run
# and summarize with: bash benchsuite/connect/family.sh summary
# Knobs: N=100000 D=5s ROUNDS=3 PORT=19900 OUT=benchsuite/runs/<date>/connect-family
#        SIDES="before=PATH after=PATH [NAME=PATH ...]" (the binaries; the first one's
#        server serves every run, and the summary compares each to it)
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/../lib/preamble.sh" connect-family
knobs N=100000 D=5s ROUNDS=3 PORT=19900
HOST=127.0.0.1
SERVER_PROCS=$(( (N + 14999) / 15000 ))
WHAT=${1:?usage: family.sh run|summary}

if [ "$WHAT" = summary ]; then
python3 - "$OUT" <<'PY'
import json, glob, re, statistics, sys
out = sys.argv[1]
rows, names = {}, []
for p in sorted(glob.glob(f"{out}/*-r*-*.json")):
    m = re.search(r"/(hold|churn)-r(\d+)-([A-Za-z0-9_]+)\.json$", p)
    if not m:
        continue
    j = json.load(open(p)); c = j["connect"]
    ok = "ok" if j["outcome"]["success"] else "FELL SHORT"
    v = {"cpu": j["cpu"]["client_s"], "ok": f"{c['established']:,} established, {c['failed']} failed, {sum(c['lost'].values())} lost, {ok}"}
    if m.group(1) == "hold":
        v.update(t=c["time_to_establish_s"], rss=c["memory"]["client_rss_per_conn_bytes"])
    else:
        v.update(rate=c["churn"]["connections_per_s"])
    rows.setdefault((m.group(1), m.group(3)), []).append((int(m.group(2)), v))
order = open(f"{out}/sides.txt").read().split()
med = statistics.median
for kind, keys in (("hold", (("t", "time to all established (s)"), ("rss", "client RSS per connection (B)"), ("cpu", "client CPU (s)"))),
                   ("churn", (("rate", "churn, cycles ok per second"), ("cpu", "client CPU (s)")))):
    print(f"\n{kind}\n")
    print("| round | binary | " + " | ".join(n for _, n in keys) + " | result |")
    print("|---|---|" + "---|" * len(keys) + "---|")
    for side in order:
        for r, v in sorted(rows.get((kind, side), [])):
            print(f"| {r} | {side} | " + " | ".join(f"{v[k]:.3f}" for k, _ in keys) + f" | {v['ok']} |")
    for k, name in keys:
        b = [v[k] for _, v in rows.get((kind, order[0]), [])]
        for side in order[1:]:
            a = [v[k] for _, v in rows.get((kind, side), [])]
            if a and b:
                print(f"- {name}: {order[0]} {med(b):.3f} [{min(b):.3f}-{max(b):.3f}], {side} {med(a):.3f} [{min(a):.3f}-{max(a):.3f}]; {side}/{order[0]} {med(a)/med(b):.3f}x")
PY
exit 0
fi

SIDES=${SIDES:?give SIDES="before=PATH after=PATH"}
read -r -a sides <<<"$SIDES"
names=()
declare -A bin
for kv in "${sides[@]}"; do names+=("${kv%%=*}"); bin[${kv%%=*}]=${kv#*=}; done
FIRST=${bin[${names[0]}]}
echo "${names[*]}" >"$OUT/sides.txt"
{
    echo "date: $(date -u +%FT%TZ) commit: $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null) sides: $SIDES N: $N D: $D"
    echo "  ulimit -Hn: $(ulimit -Hn); $(grep -E '^MemAvailable:' /proc/meminfo)"
} >>"$OUT/limits.txt"

# Starts the 'before' server on $port with these extra flags; sets PID (preamble.sh's
# one server) and pids (its worker processes, or itself).
start_server() {
    local tag=$1; shift
    taskset -c 0 "$FIRST" serve echo --listen "$HOST:$port" "$@" \
        >"$OUT/$tag-server.stdout" 2>"$OUT/$tag-server.stderr" &
    PID=$!
    pids=""
    for _ in $(seq 1 300); do
        pids=$(sed -n 's/^worker pids: //p' "$OUT/$tag-server.stdout")
        [ -n "$pids" ] && return 0
        grep -q "listening on" "$OUT/$tag-server.stdout" && { pids=$PID; return 0; }
        sleep 0.1
    done
    echo "family.sh: the server did not start" >&2
    exit 1
}

# One client run; the exit code goes to its stdout file.
client() {
    local tag=$1; shift
    set +e
    timeout -s INT 120 taskset -c 1 "$wb" connect "$HOST:$port" "$@" \
        -q --json "$OUT/$tag.json" >"$OUT/$tag.stdout" 2>"$OUT/$tag.stderr"
    echo "exit $?" >>"$OUT/$tag.stdout"
    set -e
    echo "$(date -u +%T) $tag done" >>"$OUT/timeline.txt"
}

port=$PORT
count=${#names[@]}
for r in $(seq 1 "$ROUNDS"); do
    for i in $(seq 0 $((count - 1))); do
        side=${names[$(( (i + r - 1) % count ))]}
        wb=${bin[$side]}
        port=$((port + 1))
        start_server "hold-r$r-$side" --processes "$SERVER_PROCS" --idle-timeout 0
        client "hold-r$r-$side" -n "$N" --server-pid "$pids"
        stop_server
        port=$((port + 1))
        start_server "churn-r$r-$side"
        client "churn-r$r-$side" --churn -d "$D"
        stop_server
    done
done
