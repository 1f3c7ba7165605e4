#!/usr/bin/env bash
# What a scrape of --metrics-listen costs the load's process, in instructions
# (callgrind, one file per thread), so the answer does not depend on the machine's
# noise. Runs of the same count-bounded echo load against the C echo server (CPU 0),
# client on CPU 1, ROUNDS rounds of: without the endpoint, with it and nobody scraping,
# and with it scraped SCRAPE_HZ times a second by benchsuite/live/scrape.py (on CPU 0,
# outside callgrind). Prints per run the load thread's instructions per message (a
# scrape must not touch it) and the endpoint thread's (wb-metrics) instructions, and per
# scraped run that thread's instructions per scrape (its idle polling included: an upper
# bound), and one scrape in messages' worth
# of the load thread: at one scrape a second, its share of a load of R messages a second
# is (per scrape) / (R x per message).
# Usage: flock -s /work/locks/bench.lock bash benchsuite/live/scrape_callgrind.sh BIN
# Knobs: ROUNDS=3 COUNT=200000 CONNS=10 PIPELINE=16 SCRAPE_HZ=20 BASE_PORT=9830
set -euo pipefail
BIN=$(realpath "$1")
source "$(dirname "${BASH_SOURCE[0]}")/../lib/c_echo.sh" scrape-callgrind
source "$(dirname "${BASH_SOURCE[0]}")/../lib/callgrind.sh"
knobs ROUNDS=3 COUNT=200000 CONNS=10 PIPELINE=16 SCRAPE_HZ=20 BASE_PORT=9830
need_tools valgrind callgrind_annotate
PORT=$BASE_PORT
SCRAPER=""
trap 'kill "$SCRAPER" 2>/dev/null || true; stop_server; rm -rf "$WORK"' EXIT

# The instructions of the endpoint's thread (the file whose functions include its
# request parser, so a scraped run's), 0 when there is none.
endpoint_thread() {
    local f
    for f in "$1".cg*; do
        grep -q 'metrics::endpoint::parse' "$f" && { sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$f"; return; }
    done
    echo 0
}

# run TAG SCRAPE [ARGS...]: one callgrind run, scraped or not; one summary row.
run() {
    local tag=$1 scrape=$2; shift 2
    local mport=$((PORT + 500)) scrapes=0 load ep
    start_c_server
    if [[ $scrape == yes ]]; then
        : >"$OUT/$tag.scrapes"
        taskset -c 0 python3 "$SCRIPT_DIR/scrape.py" "http://127.0.0.1:$mport/metrics" "$OUT/$tag.scrapes" "$SCRAPE_HZ" &
        SCRAPER=$!
    fi
    [[ $# -gt 0 ]] && set -- "$@" "127.0.0.1:$mport"
    taskset -c 1 valgrind --tool=callgrind --separate-threads=yes \
        --callgrind-out-file="$WORK/$tag.cg" \
        "$BIN" echo "127.0.0.1:$PORT" -t 1 -c "$CONNS" --pipeline "$PIPELINE" --size 36 \
        -n "$COUNT" --quiet --json "$OUT/$tag.json" "$@" \
        >"$OUT/$tag.stdout" 2>"$OUT/$tag.valgrind.txt"
    stop_server
    if [[ -n $SCRAPER ]]; then
        kill "$SCRAPER"; wait "$SCRAPER" 2>/dev/null || true; SCRAPER=""
        scrapes=$(grep -c $'\t200\t' "$OUT/$tag.scrapes" || true)
    fi
    load=$(busiest_thread "$WORK/$tag" "$OUT/$tag.annotate.txt")
    ep=$(endpoint_thread "$WORK/$tag")
    printf '%s\t%s\t%s\t%s\t%s\n' "$tag" "$load" "$ep" "$scrapes" "$COUNT" | tee -a "$OUT/runs.tsv"
}

printf 'run\tload_thread\tendpoint_thread\tscrapes\tmessages\n' >"$OUT/runs.tsv"
for ((round = 1; round <= ROUNDS; round++)); do
    run "r${round}_plain" no
    run "r${round}_idle" no --metrics-listen
    run "r${round}_scraped" yes --metrics-listen
done
python3 - "$OUT/runs.tsv" <<'PY' | tee "$OUT/summary.txt"
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
def kind(r): return r["run"].split("_", 1)[1]
per_msg = {k: [int(r["load_thread"]) / int(r["messages"]) for r in rows if kind(r) == k] for k in ("plain", "idle", "scraped")}
for k, v in per_msg.items():
    print(f"load thread, {k}: {statistics.median(v):.1f} instructions per message (runs: {', '.join(f'{x:.1f}' for x in v)})")
# The endpoint thread's whole run over its scrapes: an upper bound per scrape (its idle
# polling, ten wake-ups a second, is in it too).
per_scrape = [int(r["endpoint_thread"]) / int(r["scrapes"]) for r in rows if kind(r) == "scraped" and int(r["scrapes"])]
if per_scrape:
    p, m = statistics.median(per_scrape), statistics.median(per_msg["plain"])
    print(f"one scrape on the endpoint thread: {p:,.0f} instructions (runs: {', '.join(f'{x:,.0f}' for x in per_scrape)}) = {p / m:,.0f} messages' worth")
    for rate in (100_000, 1_000_000):
        print(f"  at 1 scrape/s beside {rate:,} messages/s: {p / (rate * m):.3%} of the load thread's instructions")
PY
