#!/usr/bin/env bash
# gRPC unary calls, two comparisons in the same run, ROUNDS interleaved rounds each
# (the order swapped every round), servers on CPU 0, generators on CPU 1:
#  1. generators: `wirebench grpc` vs ghz against the same `serve grpc` (one thread):
#     calls per generator CPU-second (the generator's user + system time, from
#     getrusage of the child), each count the generator's own OK calls, held equal
#     to the server's `requests`;
#  2. servers: `serve grpc` vs a grpcio server (tests/peers/grpc_peer.py, its thread
#     pool), both driven by the same `wirebench grpc` load: calls per server
#     CPU-second (utime + stime from /proc/PID/stat around the load), each count
#     wirebench's OK calls, held equal to the server's own count.
#
# Usage: flock -x /work/locks/bench.lock bash benchsuite/grpc/run.sh
# Knobs: ROUNDS=3 N=200000 C=50 M=10 BASE_PORT=19300
#        WIREBENCH=path (default target/release/wirebench) GHZ=path (default ~/.cache/wirebench/ghz/bin/ghz, scripts/test.sh builds it)
#        PYTHON=path (default ~/.cache/wirebench/grpcio/bin/python3)
#        OUT=benchsuite/runs/<date>/grpc
set -euo pipefail
# shellcheck source=../lib/preamble.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/preamble.sh" grpc
knobs ROUNDS=3 N=200000 C=50 M=10 BASE_PORT=19300
WB=${WIREBENCH:-${CARGO_TARGET_DIR:-$REPO/target}/release/wirebench}
GHZ=${GHZ:-$HOME/.cache/wirebench/ghz/bin/ghz}
PYTHON=${PYTHON:-$HOME/.cache/wirebench/grpcio/bin/python3}
need_tools taskset python3 "$WB" "$GHZ" "$PYTHON"
PORT=$BASE_PORT
TICK=$(getconf CLK_TCK)
# ghz takes the method from a .proto; wirebench sends the same 6-byte message.
cat >"$WORK/bench.proto" <<'PROTO'
syntax = "proto3";
package bench;
message Req { string name = 1; int32 n = 2; }
service Echo { rpc Say(Req) returns (Req); }
PROTO
DATA='{"name": "ab", "n": 3}'

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

start_serve_grpc() { # TAG
    PORT=$((PORT + 1))
    taskset -c 0 "$WB" serve grpc --listen "127.0.0.1:$PORT" --threads 1 >"$OUT/$1.serve.stdout" 2>&1 &
    PID=$!
    wait_port "$PORT" || { echo "!! serve grpc did not start" >&2; exit 1; }
}

start_grpcio() { # TAG
    PORT=$((PORT + 1))
    taskset -c 0 "$PYTHON" "$REPO/tests/peers/grpc_peer.py" server "$PORT" >"$OUT/$1.serve.stdout" 2>&1 &
    PID=$!
    wait_port "$PORT" || { echo "!! the grpcio server did not start" >&2; exit 1; }
}

# Runs a command on CPU 1 and prints its children's CPU seconds (user + system).
child_cpu() { # OUTFILE COMMAND...
    python3 - "$@" <<'PY'
import resource, subprocess, sys
out = open(sys.argv[1], "w")
subprocess.run(["taskset", "-c", "1", *sys.argv[2:]], stdout=out, stderr=subprocess.STDOUT, check=True)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{r.ru_utime + r.ru_stime:.3f}")
PY
}

wirebench_load() { # OUTFILE
    child_cpu "$1" "$WB" grpc "127.0.0.1:$PORT" --call bench.Echo/Say --proto "$WORK/bench.proto" \
        --data "$DATA" -n "$N" -t 1 -c "$C" -m "$M" --json "$1.json" -q
}

served() { # SERVE_STDOUT: the calls the server counted
    python3 - "$1" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
m = re.findall(r"final: .* requests ([\d,]+)", text) or re.findall(r"^calls (\d+)", text, re.M)
print(m[-1].replace(",", ""))
PY
}

ok_of() { # GENERATOR KIND OUTFILE
    python3 - "$@" <<'PY'
import json, sys
kind, out = sys.argv[2], sys.argv[3]
if kind == "wirebench":
    j = json.load(open(out + ".json"))
    assert j["totals"]["errors"] == 0, j["errors"]
    print(j["totals"]["ok"])
else:
    j = json.load(open(out))
    print(j["statusCodeDistribution"].get("OK", 0))
PY
}

generators() { # ROUND GENERATOR
    local tag=gen_r$1_$2 cpu ok
    start_serve_grpc "$tag"
    if [[ $2 == wirebench ]]; then
        cpu=$(wirebench_load "$OUT/$tag.out")
    else
        cpu=$(child_cpu "$OUT/$tag.out" "$GHZ" --insecure --proto "$WORK/bench.proto" \
            --call bench.Echo/Say -d "$DATA" -n "$N" -c "$((C * M))" --connections "$C" \
            -O json "127.0.0.1:$PORT")
    fi
    stop_server TERM
    ok=$(ok_of x "$2" "$OUT/$tag.out")
    local srv
    srv=$(served "$OUT/$tag.serve.stdout")
    [[ $srv == "$ok" ]] || { echo "!! $2: the server answered $srv, the generator counted $ok OK" >&2; exit 1; }
    printf '%s\tgenerator\t%s\t%s\t%s\n' "$1" "$2" "$ok" "$cpu" >>"$OUT/raw.tsv"
    tail -n 1 "$OUT/raw.tsv" >&2
}

servers() { # ROUND SERVER
    local tag=srv_r$1_$2 t0 t1 ok
    if [[ $2 == wirebench ]]; then start_serve_grpc "$tag"; else start_grpcio "$tag"; fi
    t0=$(ticks "$PID")
    wirebench_load "$OUT/$tag.out" >/dev/null
    t1=$(ticks "$PID")
    stop_server TERM
    ok=$(ok_of x wirebench "$OUT/$tag.out")
    local srv
    srv=$(served "$OUT/$tag.serve.stdout")
    [[ $srv == "$ok" ]] || { echo "!! $2: the server counted $srv, wirebench $ok OK" >&2; exit 1; }
    printf '%s\tserver\t%s\t%s\t%s\n' "$1" "$2" "$ok" \
        "$(python3 -c "print(f'{($t1 - $t0) / $TICK:.3f}')")" >>"$OUT/raw.tsv"
    tail -n 1 "$OUT/raw.tsv" >&2
}

{
    echo "date: $(date -u '+%F %T') UTC"
    echo "commit: $(git -C "$REPO" rev-parse --short HEAD)"
    echo "wirebench: $WB; ghz: $("$GHZ" --version 2>&1); grpcio: $("$PYTHON" -c 'import grpc; print(grpc.__version__)')"
    echo "N=$N C=$C M=$M ROUNDS=$ROUNDS (ghz: -c $((C * M)) --connections $C)"
} >"$OUT/setup.txt"
printf 'round\tcompare\twho\tcalls\tcpu_s\n' >"$OUT/raw.tsv"
for ((round = 1; round <= ROUNDS; round++)); do
    if ((round % 2)); then a=wirebench b=ghz; else a=ghz b=wirebench; fi
    generators "$round" "$a"
    generators "$round" "$b"
    if ((round % 2)); then a=wirebench b=grpcio; else a=grpcio b=wirebench; fi
    servers "$round" "$a"
    servers "$round" "$b"
done
python3 - "$OUT/raw.tsv" >"$OUT/summary.txt" <<'PY'
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])][1:]
per = {}
for rnd, what, who, calls, cpu in rows:
    per.setdefault((what, rnd), {})[who] = int(calls) / float(cpu)
def line(what, other, label):
    r = [v["wirebench"] / v[other] for (w, _), v in sorted(per.items()) if w == what]
    print(f"{label}: median {statistics.median(r):.2f}x range {min(r):.2f}-{max(r):.2f} "
          f"over {len(r)} rounds: {' '.join(f'{x:.2f}' for x in r)}")
line("generator", "ghz", "calls per generator CPU-second, wirebench grpc / ghz")
line("server", "grpcio", "calls per server CPU-second, serve grpc / grpcio server")
PY
cat "$OUT/setup.txt" "$OUT/summary.txt"
