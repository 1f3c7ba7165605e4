#!/usr/bin/env bash
# Watching a run, what it costs (issue 32 figure): a load's rate with nothing watching
# (plain: progress lines to a file), with a scraper reading its --metrics-listen
# endpoint every second, and with the live terminal view (--tui, on a pty made by
# `script`). The scraper is one long-lived process, as Prometheus is (scrape.py: one
# GET a second, each on a new connection since the endpoint closes after each answer),
# pinned beside the generator so its cost counts against the load; it starts before
# the load and waits for the endpoint, so its own start-up is not in the run.
# echo 100 x 16 and http 50 x 1 against the built-in servers (`BIN serve echo|http`,
# server on CPU 0, generator on CPU 1), ROUNDS rounds, the three modes' order rotating
# each round; every run has --progress 1s, so the figures change once a second in all.
# Prints each mode's rate over plain's in the same round: median and range.
# Usage: flock -x /work/locks/bench.lock bash benchsuite/live/run.sh BIN
# Knobs: ROUNDS=3 SECS=10 OUT=benchsuite/runs/<date>/live
set -euo pipefail
BIN=$(realpath "$1")
ROUNDS=${ROUNDS:-3}
SECS=${SECS:-10}
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/../.." && pwd)
OUT=${OUT:-$REPO/benchsuite/runs/$(date +%F)/live}
mkdir -p "$OUT"
command -v script >/dev/null || { echo "needs script(1) (util-linux) for the --tui runs" >&2; exit 2; }
SERVER_PID=""
SCRAPER_PID=""
# A killed child's wait is non-zero: not a failure of the script.
stop() { [[ -n "$1" ]] || return 0; kill "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }
stop_scraper() { stop "$SCRAPER_PID"; SCRAPER_PID=""; }
stop_server() { stop "$SERVER_PID"; SERVER_PID=""; }
trap 'stop_scraper; stop_server' EXIT
field() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }
free_port() { python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])"; }

# One load in `mode`: its result in $OUT/rate-LOAD-MODE-rR.json.
run_one() {
    local load=$1 mode=$2 r=$3 target=$4; shift 4
    local base="$OUT/rate-$load-$mode-r$r" mport
    local cmd=(taskset -c 1 "$BIN" "$load" "$target" -t 1 "$@" -d "${SECS}s" --progress 1s --json "$base.json")
    case $mode in
        plain) "${cmd[@]}" --no-tui > "$base.txt" 2>&1 ;;
        scraper)
            mport=$(free_port)
            taskset -c 1 python3 "$SCRIPT_DIR/scrape.py" "http://127.0.0.1:$mport/metrics" "$base.scrapes" &
            SCRAPER_PID=$!
            sleep 0.5
            "${cmd[@]}" --no-tui --metrics-listen "127.0.0.1:$mport" > "$base.txt" 2>&1
            stop_scraper ;;
        tui) script -qfc "$(printf '%q ' "${cmd[@]}") --tui" /dev/null > "$base.txt" 2>&1 ;;
    esac
    local scrapes=0
    [[ $mode == scraper ]] && scrapes=$(grep -c $'\t200\t' "$base.scrapes" || true)
    echo -e "$r\t$load\t$mode\t$(field "$base.json" "j['throughput']['msgs_per_s']")\t$scrapes" >> "$OUT/rate.tsv"
}

echo -e "round\tload\tmode\tper_s\tscrapes" > "$OUT/rate.tsv"
modes=(plain scraper tui)
for load in echo http; do
    port=$(free_port)
    taskset -c 0 "$BIN" serve "$load" --listen "127.0.0.1:$port" --threads 1 > "$OUT/serve-$load.txt" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
    if [[ $load == echo ]]; then target=127.0.0.1:$port; args=(-c 100 --pipeline 16); else target=http://127.0.0.1:$port/; args=(-c 50); fi
    for r in $(seq 1 "$ROUNDS"); do
        for i in 0 1 2; do
            run_one "$load" "${modes[$(( (i + r) % 3 ))]}" "$r" "$target" "${args[@]}"
        done
    done
    stop_server
done

python3 - "$OUT/rate.tsv" <<'PY' | tee "$OUT/summary.txt"
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
rate = {(r["load"], r["mode"], r["round"]): float(r["per_s"]) for r in rows}
for load in ("echo", "http"):
    rounds = sorted({r["round"] for r in rows if r["load"] == load})
    plain = [rate[(load, "plain", k)] for k in rounds]
    print(f"{load}: plain {statistics.median(plain):,.0f}/s median of {len(rounds)} rounds")
    for mode in ("scraper", "tui"):
        ratios = [rate[(load, mode, k)] / rate[(load, "plain", k)] for k in rounds]
        print(f"  {mode} / plain: median {statistics.median(ratios):.3f}, range {min(ratios):.3f}-{max(ratios):.3f}")
    scrapes = [int(r["scrapes"]) for r in rows if r["load"] == load and r["mode"] == "scraper"]
    print(f"  scrapes answered 200 per scraper run: {scrapes}")
PY
