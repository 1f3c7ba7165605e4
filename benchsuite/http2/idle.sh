#!/usr/bin/env bash
# Server user memory per idle HTTP/2 connection, the method benchsuite/memory/
# idle_server.sh uses for HTTP/1.1 (RSS of the server before the connections and
# once all are up, divided by their number): `wirebench serve http` (one thread, CPU 0)
# holds N connections that a Python client (CPU 1) opens, each speaking h2c by prior
# knowledge: preface, SETTINGS, one `GET /` answered, SETTINGS acknowledged, then idle.
# The same run holds N HTTP/1.1 connections after one `GET /` each, for reference.
#
# Usage: flock -x /work/locks/bench.lock bash benchsuite/http2/idle.sh
# Knobs: N=10000 ROUNDS=3 BASE_PORT=19300 LOOP= (epoll: WIREBENCH_SERVER_LOOP=epoll)
#        WIREBENCH=path OUT=benchsuite/runs/<date>/http2-idle
set -euo pipefail
# shellcheck source=../lib/preamble.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/preamble.sh" http2-idle
knobs N=10000 ROUNDS=3 BASE_PORT=19300
WB=${WIREBENCH:-${CARGO_TARGET_DIR:-$REPO/target}/release/wirebench}
PORT=$BASE_PORT

cat >"$WORK/hold.py" <<'PY'
import socket, struct, sys
port, n, proto = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload
def lit(k, v):
    return bytes([0, len(k)]) + k + bytes([len(v)]) + v
block = lit(b":method", b"GET") + lit(b":scheme", b"http") + lit(b":path", b"/") + lit(b":authority", b"localhost")
h2 = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0) + frame(1, 5, 1, block) + frame(4, 1, 0)
h1 = b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n"
held = []
for _ in range(n):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(h2 if proto == "h2" else h1)
    got = b""
    # h2: until the response's DATA frame "hello"; h1: until its body.
    while not got.endswith(b"hello"):
        d = s.recv(4096)
        if not d:
            sys.exit(f"closed after {len(held)} connections")
        got += d
    held.append(s)
print("held", len(held), flush=True)
sys.stdin.read()
PY

rss() { awk '/^VmRSS/ {print $2 * 1024}' "/proc/$1/status"; }

printf 'round\tprotocol\tconnections\tserver_rss_before\tserver_rss_after\tbytes_per_conn\n' >"$OUT/raw.tsv"
for ((round = 1; round <= ROUNDS; round++)); do
    for proto in h2 h1; do
        PORT=$((PORT + 1))
        taskset -c 0 "$WB" serve http --listen "127.0.0.1:$PORT" --threads 1 --idle-timeout 0 \
            >"$OUT/r${round}_$proto.serve.stdout" 2>&1 &
        PID=$!
        wait_port "$PORT"
        sleep 0.5
        before=$(rss "$PID")
        coproc HOLD { taskset -c 1 python3 "$WORK/hold.py" "$PORT" "$N" "$proto"; }
        read -r line <&"${HOLD[0]}"
        sleep 1
        after=$(rss "$PID")
        exec {HOLD[1]}>&-
        wait "$HOLD_PID" || true
        stop_server TERM
        printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$proto" "${line#held }" "$before" "$after" \
            "$(( (after - before) / N ))" >>"$OUT/raw.tsv"
        tail -n 1 "$OUT/raw.tsv" >&2
    done
done
python3 - "$OUT/raw.tsv" >"$OUT/summary.txt" <<'PY'
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])][1:]
for proto in ("h2", "h1"):
    v = [int(r[5]) for r in rows if r[1] == proto]
    print(f"{proto}: server RSS per idle connection median {statistics.median(v)} B, range {min(v)}-{max(v)}, {len(v)} rounds")
PY
cat "$OUT/summary.txt"
