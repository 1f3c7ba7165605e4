#!/usr/bin/env bash
# HTTP/2 generators against nginx (h2c, prior knowledge, one worker on CPU 0; with
# TLS=1, as benchsuite/http2/tls.sh runs it, h2 over TLS chosen by ALPN with a
# self-signed ECDSA P-256 certificate made here, which neither client verifies: h2load
# never does, wirebench with --insecure): `wirebench http --h2` vs h2load, both on
# CPU 1 with one thread, C connections and M
# streams each, N requests: req/s and requests per generator CPU-second (user + system
# time of the generator process, from getrusage of the child). Each count is the tool's
# own: h2load's succeeded, wirebench's totals.ok, each held to N. ROUNDS rounds, the
# order swapped every round. With OFF=1, each round also runs `wirebench http --h2
# --coalesce off` (generator wirebench-off: every reply read as it lands,
# docs/coalesce.md), compared with h2load and with wirebench.
#
# Usage: flock -x /work/locks/bench.lock bash benchsuite/http2/client.sh
# Knobs: ROUNDS=3 N=300000 C=50 M=10 BASE_PORT=19200 TLS=0
#        WIREBENCH=path (default target/release/wirebench)
#        OUT=benchsuite/runs/<date>/http2-client (http2-tls with TLS=1)
set -euo pipefail
# shellcheck source=../lib/nginx.sh
if [[ ${TLS:-0} == 1 ]]; then name=http2-tls; else name=http2-client; fi
source "$(dirname "${BASH_SOURCE[0]}")/../lib/nginx.sh" "$name"
knobs ROUNDS=3 N=300000 C=50 M=10 BASE_PORT=19200 TLS=0 OFF=0
WB=${WIREBENCH:-${CARGO_TARGET_DIR:-$REPO/target}/release/wirebench}
need_tools h2load taskset python3
PORT=$BASE_PORT
scheme=http listener=h2c insecure=()
if [[ $TLS == 1 ]]; then
    need_tools openssl
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
        -subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
        -keyout "$WORK/key.pem" -out "$WORK/cert.pem" 2>/dev/null
    scheme=https listener="h2 over TLS" insecure=(--insecure)
fi

# The generator's command under a Python parent that reports its CPU time, wall time and
# voluntary context switches (each a sleep the server's next reply woke it from).
cat >"$WORK/timed.py" <<'PY'
import resource, subprocess, sys, time
out = sys.argv[1]
t0 = time.monotonic()
with open(out, "w") as f:
    code = subprocess.call(sys.argv[2:], stdout=f, stderr=subprocess.STDOUT)
wall = time.monotonic() - t0
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{code}\t{r.ru_utime + r.ru_stime:.3f}\t{wall:.3f}\t{r.ru_nvcsw}")
PY

measure() { # ROUND GENERATOR
    local tag=r$1_$2 url timing
    PORT=$((PORT + 1))
    if [[ $TLS == 1 ]]; then start_nginx_h2_tls "$WORK/cert.pem" "$WORK/key.pem"; else start_nginx_h2c; fi
    url="$scheme://127.0.0.1:$PORT/"
    local extra=()
    [[ $2 == wirebench-off ]] && extra=(--coalesce off)
    if [[ $2 == h2load ]]; then
        timing=$(taskset -c 1 python3 "$WORK/timed.py" "$OUT/$tag.out" h2load -t 1 -n "$N" -c "$C" -m "$M" "$url")
    else
        timing=$(taskset -c 1 python3 "$WORK/timed.py" "$OUT/$tag.out" "$WB" http --h2 "$url" "${insecure[@]}" -t 1 -c "$C" --max-streams "$M" -n "$N" --json "$OUT/$tag.json" "${extra[@]}")
    fi
    stop_nginx
    python3 - "$1" "$2" "$timing" "$OUT/$tag.out" "$OUT/$tag.json" "$N" >>"$OUT/raw.tsv" <<'PY'
import json, re, sys
rnd, gen, timing, out, js, n = sys.argv[1:]
code, cpu, wall, switches = timing.split("\t")
if gen == "h2load":
    text = open(out).read()
    ok = int(re.search(r"(\d+) succeeded", text).group(1))
    rps = float(re.search(r"finished in [\d.]+m?s, ([\d.]+) req/s", text).group(1))
else:
    r = json.load(open(js))
    ok = r["totals"]["ok"]
    rps = ok / r["elapsed_s"]
assert code == "0", f"{gen} exited {code}"
assert ok == int(n), f"{gen} counted {ok} of {n}"
print(f"{rnd}\t{gen}\t{ok}\t{float(cpu):.3f}\t{ok / float(cpu):.0f}\t{rps:.0f}\t{int(switches) / ok:.3f}")
PY
    tail -n 1 "$OUT/raw.tsv" >&2
}

printf 'round\tgenerator\trequests\tgenerator_cpu_s\treq_per_generator_cpu_s\treq_per_s\tsleeps_per_request\n' >"$OUT/raw.tsv"
for ((round = 1; round <= ROUNDS; round++)); do
    if ((round % 2)); then order="wirebench h2load"; else order="h2load wirebench"; fi
    if [[ $OFF == 1 ]]; then
        if ((round % 2)); then order="$order wirebench-off"; else order="wirebench-off $order"; fi
    fi
    for gen in $order; do measure "$round" "$gen"; done
done
python3 - "$OUT/raw.tsv" "$listener" >"$OUT/summary.txt" <<'PY'
import statistics, sys
listener = sys.argv[2]
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])][1:]
by = {}
for rnd, gen, _, _, per_cpu, rps, _ in rows:
    by.setdefault(rnd, {})[gen] = (float(per_cpu), float(rps))
def ratios(a, b):
    cpu = [r[a][0] / r[b][0] for r in by.values()]
    rps = [r[a][1] / r[b][1] for r in by.values()]
    return cpu, rps
pairs = [("wirebench", "h2load", "wirebench http --h2 / h2load")]
if any("wirebench-off" in r for r in by.values()):
    pairs += [("wirebench-off", "h2load", "wirebench http --h2 --coalesce off / h2load"),
              ("wirebench", "wirebench-off", "wirebench http --h2 / the same with --coalesce off")]
for gen in sorted({g for r in rows for g in [r[1]]}):
    sl = [float(r[6]) for r in rows if r[1] == gen]
    print(f"sleeps per request (voluntary context switches), {gen}: median {statistics.median(sl):.3f} range {min(sl):.3f}-{max(sl):.3f}")
for a, b, what in pairs:
    cpu, rps = ratios(a, b)
    print(f"requests per generator CPU-second, {what} (nginx {listener}): median {statistics.median(cpu):.3f}x "
          f"range {min(cpu):.3f}-{max(cpu):.3f} over {len(cpu)} rounds: {' '.join(f'{x:.3f}' for x in cpu)}")
    print(f"req/s, {what}: median {statistics.median(rps):.3f}x "
          f"range {min(rps):.3f}-{max(rps):.3f}: {' '.join(f'{x:.3f}' for x in rps)}")
PY
cat "$OUT/summary.txt"
