#!/usr/bin/env bash
# AMQP benchmark: wirebench's publisher against its own broker (`serve amqp`), through
# haproxy (TCP mode, the amqpprox scenario), and against RabbitMQ beside RabbitMQ's own
# PerfTest. Broker (and haproxy) pinned to CPU 0, load generator to CPU 1, rounds
# interleaved; figures are median and range over the rounds.
#
# Usage (as root, for RabbitMQ): flock -x /work/machine.lock bash benchsuite/amqp/run.sh
# Knobs (environment):
#   ROUNDS=3        interleaved rounds
#   DURATION=5      measured seconds per wirebench run
#   PERFTEST_S=10   seconds per PerfTest and wirebench-vs-RabbitMQ run
#   OUT=benchsuite/runs/<date>/amqp   output directory
#   PERFTEST_LIB=dir with PerfTest 2.22.1 and its runtime jars (fetched with Maven if unset)
#   WIREBENCH=path  use this binary (default target/release/wirebench, built before the lock)
#
# Per round:
#   churn-direct / churn-haproxy      --mode churn, 50 clients at once, 10 x 100 B each: connections/s
#   pub-direct / pub-haproxy          publish, 10 connections, 100 B, no confirms: msgs/s
#   pubc-direct / pubc-haproxy        the same with confirms (100 in flight per connection)
#   big-direct / big-haproxy          amqpprox's MB/s point: 10 clients x 50 x 10 MB
#   rabbit-perftest / rabbit-wirebench  1 producer, 100 B, no confirms, no consumer, against RabbitMQ
# Output: $OUT/raw.tsv (round, name, value, unit), $OUT/*.json|*.txt, $OUT/summary.md
set -euo pipefail

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-5}
PERFTEST_S=${PERFTEST_S:-10}
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/../.." && pwd)
OUT=${OUT:-$REPO/benchsuite/runs/$(date +%F)/amqp}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
WB=${WIREBENCH:-$REPO/target/release/wirebench}
BROKER_PORT=20700
PROXY_PORT=20701
RABBIT_DIR=$(mktemp -d "${TMPDIR:-/tmp}/wirebench-rabbit.XXXXXX")
HAP_CFG=$RABBIT_DIR/haproxy.cfg
BROKER_PID=""
HAP_PID=""

log() { printf '%s\n' "$*" >&2; }
cleanup() {
    for p in "$HAP_PID" "$BROKER_PID"; do
        if [[ -n "$p" ]] && kill -0 "$p" 2>/dev/null; then
            kill -TERM "$p" 2>/dev/null || true
            wait "$p" 2>/dev/null || true
        fi
    done
    bash "$REPO/scripts/rabbitmq.sh" stop "$RABBIT_DIR" || true
    rm -rf "$RABBIT_DIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[[ -x "$WB" ]] || { log "!! $WB missing: cargo build --release first (outside the lock)"; exit 2; }
if [[ -z "${PERFTEST_LIB:-}" ]]; then
    PERFTEST_LIB=$REPO/benchsuite/amqp/perftest/lib
    if [[ ! -d "$PERFTEST_LIB" ]]; then
        log "== fetching PerfTest 2.22.1 and its runtime jars with Maven"
        (cd "$SCRIPT_DIR/perftest" && mvn -q -B dependency:copy-dependencies -DoutputDirectory=lib)
    fi
fi

printf 'round\tname\tvalue\tunit\n' >"$OUT/raw.tsv"
record() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >>"$OUT/raw.tsv"; log "   $2: $3 $4"; }
jget() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, {'d': d}))" "$1" "$2"; }

# ---------------------------------------------------------------- peers
log "== serve amqp on CPU 0 (port $BROKER_PORT), haproxy on CPU 0 (port $PROXY_PORT)"
taskset -c 0 "$WB" serve amqp --listen 127.0.0.1:$BROKER_PORT --threads 1 >"$OUT/broker.log" 2>&1 &
BROKER_PID=$!
cat >"$HAP_CFG" <<EOF
defaults
    mode tcp
    timeout connect 5s
    timeout client 1h
    timeout server 1h
frontend fe
    bind 127.0.0.1:$PROXY_PORT
    default_backend be
backend be
    server s1 127.0.0.1:$BROKER_PORT
EOF
taskset -c 0 haproxy -f "$HAP_CFG" -db >"$OUT/haproxy.log" 2>&1 &
HAP_PID=$!
log "== RabbitMQ on CPU 0"
taskset -c 0 bash "$REPO/scripts/rabbitmq.sh" start "$RABBIT_DIR"
rabbitmqctl -n rabbit@localhost -q status 2>/dev/null | grep -i "RabbitMQ version" >"$OUT/rabbitmq-version.txt" || true
sleep 1

DIRECT=amqp://guest:guest@127.0.0.1:$BROKER_PORT/
PROXY=amqp://guest:guest@127.0.0.1:$PROXY_PORT/
RABBIT=amqp://guest:guest@127.0.0.1:5672/
# PerfTest reads a trailing slash as the empty vhost "" (RabbitMQ: 530 vhost not found).
RABBIT_PT=amqp://guest:guest@127.0.0.1:5672

wb() { # name unit json-expression args...
    local name=$1 unit=$2 expr=$3 r=$4; shift 4
    local f="$OUT/r$r-$name.json"
    if taskset -c 1 "$WB" amqp "$@" -t 1 -q --json "$f" >"$OUT/r$r-$name.txt" 2>&1; then
        record "$r" "$name" "$(jget "$f" "$expr")" "$unit"
    else
        record "$r" "$name" FAIL "$unit"
        tail -n 3 "$OUT/r$r-$name.txt" >&2
    fi
}

for r in $(seq 1 "$ROUNDS"); do
    log "== round $r"
    for target in direct haproxy; do
        url=$DIRECT; [[ $target == haproxy ]] && url=$PROXY
        wb "churn-$target" conns/s "round(d['amqp']['connections_per_s'])" "$r" "$url" \
            --mode churn -d "${DURATION}s" --concurrency 50 --messages 10 --size 100
        wb "pub-$target" msgs/s "round(d['amqp']['msgs_per_s'])" "$r" "$url" \
            -c 10 -d "${DURATION}s" --size 100
        wb "pubc-$target" msgs/s "round(d['amqp']['msgs_per_s'])" "$r" "$url" \
            -c 10 -d "${DURATION}s" --size 100 --confirm --inflight 100
        wb "big-$target" MB/s "round(d['amqp']['payload_mb_per_s'])" "$r" "$url" \
            --mode churn --clients 10 --concurrency 10 --messages 50 --size 10m
    done
    # RabbitMQ: PerfTest and wirebench at the same point, one after the other.
    (cd "$RABBIT_DIR" && taskset -c 1 java -cp "$PERFTEST_LIB/*" com.rabbitmq.perf.PerfTest \
        -h "$RABBIT_PT" -x 1 -y 0 -s 100 -z "$PERFTEST_S") >"$OUT/r$r-rabbit-perftest.txt" 2>&1 || true
    rate=$(grep -o 'sending rate avg: [0-9]*' "$OUT/r$r-rabbit-perftest.txt" | grep -o '[0-9]*$' || echo FAIL)
    record "$r" rabbit-perftest "$rate" msgs/s
    wb rabbit-wirebench msgs/s "round(d['amqp']['msgs_per_s'])" "$r" "$RABBIT" \
        -c 1 -d "${PERFTEST_S}s" --size 100
done

bash "$REPO/scripts/rabbitmq.sh" depth "$RABBIT_DIR" >"$OUT/rabbitmq-queues.txt" 2>&1 || true
kill -TERM "$BROKER_PID" 2>/dev/null || true
wait "$BROKER_PID" 2>/dev/null || true
BROKER_PID=""

# ---------------------------------------------------------------- summary
python3 - "$OUT" <<'PY'
import csv, statistics, sys
out = sys.argv[1]
rows = list(csv.DictReader(open(f"{out}/raw.tsv"), delimiter="\t"))
vals, units = {}, {}
for r in rows:
    units[r["name"]] = r["unit"]
    if r["value"] != "FAIL":
        vals.setdefault(r["name"], []).append(float(r["value"]))
def fmt(name):
    v = vals.get(name, [])
    if not v:
        return "FAIL"
    return f"{statistics.median(v):,.0f} [{min(v):,.0f}-{max(v):,.0f}] {units[name]}"
lines = ["| measurement | median [range] |", "|---|---|"]
for name in units:
    lines.append(f"| {name} | {fmt(name)} |")
def ratio(a, b):
    ra = [x / y for x, y in zip(vals.get(a, []), vals.get(b, [])) if y]
    if not ra:
        return "n/a"
    return f"{statistics.median(ra):.2f}x [{min(ra):.2f}-{max(ra):.2f}]"
lines += ["", "| ratio (per round) | median [range] |", "|---|---|",
          f"| wirebench / PerfTest publishing to RabbitMQ | {ratio('rabbit-wirebench', 'rabbit-perftest')} |",
          f"| churn through haproxy / direct | {ratio('churn-haproxy', 'churn-direct')} |",
          f"| publish through haproxy / direct | {ratio('pub-haproxy', 'pub-direct')} |"]
for name, seed, unit in [("churn-direct", 1858, "connections/s"), ("churn-haproxy", 1858, "connections/s"),
                         ("big-direct", 552, "MB/s"), ("big-haproxy", 552, "MB/s")]:
    v = vals.get(name)
    if v:
        lines.append(f"| {name} / amqpprox_perf_tester's {seed:,} {unit} | {statistics.median(v)/seed:.1f}x |")
open(f"{out}/summary.md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
