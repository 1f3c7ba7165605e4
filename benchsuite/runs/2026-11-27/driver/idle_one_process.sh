#!/usr/bin/env bash
# Server user memory per idle connection on ONE server process (so its threads run on
# io_uring by default; `--processes` workers run on epoll): each binary in $SERVES
# (NAME=BIN, optionally run with WIREBENCH_SERVER_LOOP from LOOPS) runs
# `serve echo --threads 1` pinned to CPU 0; `connect` (CPU 1, 2 processes) opens N
# connections from SOURCE and holds them, reading the server's RSS before and once all
# are up (--server-pid): (after - before) / N. Rounds interleave the servers.
set -euo pipefail
N=${N:-18000}
ROUNDS=${ROUNDS:-3}
SOURCE=${SOURCE:-127.0.0.11-127.0.0.12}
HOLD=${HOLD:-1s}
CLIENT=${CLIENT:?the wirebench that runs connect}
OUT=${OUT:?}
mkdir -p "$OUT"
PID=""
trap '[[ -n "$PID" ]] && kill -TERM "$PID" 2>/dev/null; wait 2>/dev/null || true' EXIT
printf 'round\tserver\tloop\testablished\tserver_rss_before\tserver_rss_after\tbytes_per_conn\n' >"$OUT/raw.tsv"
port=19600
for ((round = 1; round <= ROUNDS; round++)); do
    for spec in $SERVES; do
        for loop in ${LOOPS:-uring epoll}; do
            name=${spec%%=*} bin=${spec#*=}
            port=$((port + 1))
            env WIREBENCH_SERVER_LOOP=$loop taskset -c 0 "$bin" serve echo --listen "127.0.0.254:$port" --threads 1 \
                >"$OUT/r${round}_${name}_$loop.serve.stdout" 2>&1 &
            PID=$!
            for _ in $(seq 100); do
                grep -q "listening on" "$OUT/r${round}_${name}_$loop.serve.stdout" 2>/dev/null && break
                sleep 0.1
            done
            sleep 0.3
            f=$OUT/r${round}_${name}_$loop.connect.json
            taskset -c 1 "$CLIENT" connect "127.0.0.254:$port" -n "$N" --processes 2 --source "$SOURCE" --hold "$HOLD" \
                --server-pid "$PID" --json "$f" -q >"$OUT/r${round}_${name}_$loop.connect.stdout" 2>&1 || true
            kill -TERM "$PID" 2>/dev/null || true
            wait "$PID" 2>/dev/null || true
            PID=""
            python3 - "$f" "$round" "$name" "$loop" >>"$OUT/raw.tsv" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
m = j["connect"]["memory"]
print("\t".join(str(x) for x in (sys.argv[2], sys.argv[3], sys.argv[4], j["connect"]["established"],
      m.get("server_rss_bytes_before"), m.get("server_rss_bytes_after"), m.get("server_rss_per_conn_bytes"))))
PY
            tail -n 1 "$OUT/raw.tsv" >&2
        done
    done
done
python3 - "$OUT/raw.tsv" <<'PY' | tee "$OUT/summary.md"
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
keys = list(dict.fromkeys((r["server"], r["loop"]) for r in rows))
print("| server | loop | bytes per idle connection, median [range] | established |")
print("|---|---|---|---|")
for s, l in keys:
    v = [float(r["bytes_per_conn"]) for r in rows if (r["server"], r["loop"]) == (s, l) and r["bytes_per_conn"] not in ("", "None")]
    e = sorted({r["established"] for r in rows if (r["server"], r["loop"]) == (s, l)})
    print(f"| {s} | {l} | {statistics.median(v):.1f} [{min(v):.1f}-{max(v):.1f}] | {','.join(e)} |" if v else f"| {s} | {l} | FAIL | |")
PY
