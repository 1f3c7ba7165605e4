#!/usr/bin/env bash
# User-space instructions per request of `wirebench http --h2` (callgrind's Ir, which
# load on the machine does not change): two builds side by side (BASE and WIREBENCH),
# against nginx h2c, nginx's h2 TLS listener (ALPN) and `serve http` (h2c, one thread,
# of WIREBENCH), -c 50 -m 10. Each build runs N1 and N2 requests; (Ir(N2) - Ir(N1)) /
# (N2 - N1) leaves out what a run costs once (start, connections, the report), and
# `--interval 3600s -q` what it costs per second. Each run's count is held to N.
#
# Usage: flock -s /work/locks/bench.lock bash benchsuite/http2/instructions.sh
# Knobs: N1=5000 N2=25000 C=50 M=10 BASE_PORT=19250
#        WIREBENCH=path (default target/release/wirebench), BASE=path (required: the
#        build to compare with), OUT=benchsuite/runs/<date>/http2-instructions
set -euo pipefail
# shellcheck source=../lib/nginx.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/nginx.sh" http2-instructions
knobs N1=5000 N2=25000 C=50 M=10 BASE_PORT=19250
WB=${WIREBENCH:-${CARGO_TARGET_DIR:-$REPO/target}/release/wirebench}
[[ -n ${BASE:-} ]] || { echo "!! BASE=path of the build to compare with is required" >&2; exit 2; }
need_tools valgrind openssl python3
PORT=$BASE_PORT
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
    -keyout "$WORK/key.pem" -out "$WORK/cert.pem" 2>/dev/null

run() { # BUILD-NAME BINARY TARGET-NAME URL N [FLAGS...]
    local tag=$1_$3_$5 bin=$2 url=$4 n=$5
    shift 5
    valgrind --tool=callgrind --callgrind-out-file="$OUT/$tag.callgrind" \
        "$bin" http --h2 "$url" -t 1 -c "$C" --max-streams "$M" -n "$n" \
        --interval 3600s -q --json "$OUT/$tag.json" "$@" >"$OUT/$tag.log" 2>&1
    python3 - "$tag" "$OUT/$tag.json" "$OUT/$tag.log" "$n" >>"$OUT/raw.tsv" <<'PY'
import json, re, sys
tag, js, log, n = sys.argv[1:]
t = json.load(open(js))["totals"]
assert t["ok"] == int(n) and t["sent"] == int(n), f"{tag}: {t['ok']} ok of {t['sent']} sent, {n} asked"
ir = int(re.search(r"Collected : (\d+)", open(log).read()).group(1))
build, target, n = tag.rsplit("_", 2)
print(f"{build}\t{target}\t{n}\t{ir}")
PY
    tail -n 1 "$OUT/raw.tsv" >&2
}

each_build() { # TARGET-NAME URL [FLAGS...]
    local target=$1 url=$2
    shift 2
    for n in "$N1" "$N2"; do
        run base "$BASE" "$target" "$url" "$n" "$@"
        run new "$WB" "$target" "$url" "$n" "$@"
    done
}

printf 'build\ttarget\trequests\tinstructions\n' >"$OUT/raw.tsv"
PORT=$((PORT + 1))
start_nginx_h2c
each_build nginx-h2c "http://127.0.0.1:$PORT/"
stop_nginx
PORT=$((PORT + 1))
start_nginx_h2_tls "$WORK/cert.pem" "$WORK/key.pem"
each_build nginx-tls "https://127.0.0.1:$PORT/" --insecure
stop_nginx
PORT=$((PORT + 1))
"$WB" serve http --listen "127.0.0.1:$PORT" --threads 1 >"$WORK/serve.log" 2>&1 &
PID=$!
wait_port "$PORT" || { echo "!! serve http did not start" >&2; exit 1; }
each_build serve-http "http://127.0.0.1:$PORT/"
stop_server

python3 - "$OUT/raw.tsv" >"$OUT/summary.txt" <<'PY'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])][1:]
ir = {(b, t, int(n)): int(i) for b, t, n, i in rows}
ns = sorted({k[2] for k in ir})
lo, hi = ns[0], ns[-1]
for target in dict.fromkeys(t for _, t, _, _ in rows):
    per = {b: (ir[(b, target, hi)] - ir[(b, target, lo)]) / (hi - lo) for b in ("base", "new")}
    print(f"{target}: instructions per request, new {per['new']:.0f}, base {per['base']:.0f}: "
          f"new/base {per['new'] / per['base']:.3f}x")
PY
cat "$OUT/summary.txt"
