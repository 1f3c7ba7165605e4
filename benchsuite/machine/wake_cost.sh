#!/usr/bin/env bash
# Who pays for a sleep on this machine: wake_cost.c ping-pongs one message between two
# threads pinned to CPUs 0 and 1, each either sleeping in epoll_wait until its peer's
# write wakes it, or spinning on it. Four pairings per transport and round (both sleep,
# only A sleeps, only B sleeps, both spin), ROUNDS rounds interleaved; the summary gives
# per round trip the median [range] of each thread's own CPU time and sleeps.
#   waker's cost of one wake    = A's CPU when both sleep - A's CPU when only A sleeps
#                                 (the only difference: B must be woken)
#   sleeper's cost of one sleep = A's CPU when only A sleeps - half the round trip when
#                                 both spin (a spinning thread's CPU is the whole round
#                                 trip, so half of it stands for one side's own work)
#
# Usage: flock -x /work/locks/gate.lock flock -x /work/locks/bench.lock bash benchsuite/machine/wake_cost.sh
# Knobs: ROUNDS=3 TRIPS=200000 TRANSPORTS="tcp unix" OUT=benchsuite/runs/<date>/wake-cost
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
ROUNDS=${ROUNDS:-3} TRIPS=${TRIPS:-200000} TRANSPORTS=${TRANSPORTS:-tcp unix}
OUT=${OUT:-$REPO/benchsuite/runs/$(date +%F)/wake-cost}
mkdir -p "$OUT"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/wirebench-wake-cost.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
gcc -O2 -pthread -o "$WORK/wake_cost" "$HERE/wake_cost.c"
RAW=$OUT/raw.tsv
printf 'round\ttransport\ta\tb\trtt_us\ta_cpu_us\ta_sleeps\tb_cpu_us\tb_sleeps\n' >"$RAW"
for ((round = 1; round <= ROUNDS; round++)); do
    for t in $TRANSPORTS; do
        for modes in "1 1" "1 0" "0 1" "0 0"; do
            # shellcheck disable=SC2086 # two numbers, split on purpose
            printf '%s\t%s\n' "$round" "$("$WORK/wake_cost" "$t" "$TRIPS" $modes)" >>"$RAW"
        done
    done
done
python3 - "$RAW" <<'PY' | tee "$OUT/summary.md"
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
def cell(xs):
    return f"{statistics.median(xs):.2f} [{min(xs):.2f}-{max(xs):.2f}]"
print("| transport | A (CPU 0) | B (CPU 1) | round trip, us | A's CPU, us | A's sleeps | B's CPU, us | B's sleeps |")
print("|---|---|---|---|---|---|---|---|")
groups = {}
for r in rows:
    groups.setdefault((r["transport"], r["a"], r["b"]), []).append(r)
for (t, a, b), rs in groups.items():
    col = lambda k: cell([float(r[k]) for r in rs])
    print(f"| {t} | {a} | {b} | {col('rtt_us')} | {col('a_cpu_us')} | {col('a_sleeps')} | {col('b_cpu_us')} | {col('b_sleeps')} |")
print()
for t in dict.fromkeys(r["transport"] for r in rows):
    med = lambda a, b, k: statistics.median(float(r[k]) for r in groups[(t, a, b)])
    sleeper = med("sleep", "spin", "a_cpu_us") - med("spin", "spin", "rtt_us") / 2
    waker = med("sleep", "sleep", "a_cpu_us") - med("sleep", "spin", "a_cpu_us")
    print(f"{t}: waking a sleeper on the other CPU costs the waker {waker:.2f} us of its "
          f"own CPU; a sleep costs the sleeper ~{sleeper:.2f} us (thread A, medians)")
PY
