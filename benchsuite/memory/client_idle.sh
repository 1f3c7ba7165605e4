#!/usr/bin/env bash
# Client user memory per idle connection: `wirebench echo` opens N connections spread
# over a 10 s ramp against `wirebench serve echo` (another process); at -R 1900 each
# connection sends once per 10 s, so nearly every connection is idle; the RSS is read
# from /proc when 10,000 and when 18,000 connections are open (the server's counter
# says), and the growth is divided by the connections between.
# Usage: WIREBENCH=path bash benchsuite/memory/client_idle.sh   (prints one TSV line)
set -euo pipefail
WB=${WIREBENCH:-target/release/wirebench}
PORT=${PORT:-19771}
N=19000
taskset -c 0 "$WB" serve echo --listen 127.0.0.1:$PORT --threads 1 >/dev/null 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true; kill $CLIENT 2>/dev/null || true' EXIT
sleep 0.5
taskset -c 1 "$WB" echo 127.0.0.1:$PORT -t 1 -c $N --ramp 10s -R 1900 -d 12s -q >/dev/null 2>&1 &
CLIENT=$!
established() { ss -Htn state established "( sport = :$PORT )" | wc -l; }
rss_kb() { awk '/^VmRSS/ {print $2}' /proc/$CLIENT/status; }
at10=""; at19=""
for _ in $(seq 1 600); do
    n=$(established)
    if [[ -z $at10 && $n -ge 10000 ]]; then at10="$n $(rss_kb)"; fi
    if [[ -z $at19 && $n -ge 18000 ]]; then at19="$n $(rss_kb)"; break; fi
    sleep 0.05
done
read -r n10 r10 <<<"$at10"
read -r n19 r19 <<<"$at19"
echo -e "conns_a\trss_a_kb\tconns_b\trss_b_kb\tbytes_per_conn"
echo -e "$n10\t$r10\t$n19\t$r19\t$(( (r19 - r10) * 1024 / (n19 - n10) ))"
wait $CLIENT || true
