#!/usr/bin/env bash
# The whole test suite (lib unit tests + integration tests) up to 20 times, each under a
# CPU hog: one busy loop per core at normal priority, started before and stopped (by
# PID) after each run, beside whatever else the machine runs (other builds).
#
# Usage: run.sh IT_BINARY LIB_BINARY   (the test binaries `cargo test --profile ci
#        --all-targets --no-run` lists), from the checkout they were built in.
# Knobs: OUT=dir for runs.tsv and each run's output; STOP=file whose existence ends the
#        loop after the current run; LOCK=the shared build lock, held during each run.
set -u
IT=$1; LIB=$2
OUT=${OUT:-hog20}; STOP=${STOP:-$OUT/STOP}; LOCK=${LOCK:-/work/locks/bench.lock}
export CI=true
mkdir -p "$OUT"
echo -e "run\tstart\tsecs\tit_passed\tit_failed\tlib_passed\tlib_failed\tfailures\tload1" > "$OUT/runs.tsv"
for i in $(seq 1 20); do
  [ -e "$STOP" ] && break
  [ "$i" -gt 1 ] && sleep 10
  # Each run holds the shared lock like a build (it perturbs timings as much), so no
  # benchmark measures beside it.
  exec 9>"$LOCK"; flock -s 9
  hogs=()
  for c in 0 1; do taskset -c $c sh -c 'while :; do :; done' & hogs+=($!); done
  start=$(date -u +%H:%M:%S); t0=$(date +%s)
  "$LIB" > "$OUT/lib-$i.txt" 2>&1
  "$IT" > "$OUT/it-$i.txt" 2>&1
  secs=$(( $(date +%s) - t0 ))
  kill "${hogs[@]}"; wait "${hogs[@]}" 2>/dev/null
  flock -u 9; exec 9>&-
  res() { grep -o "[0-9]* $2" "$1" | tail -1 | cut -d' ' -f1; }
  fails=$(grep -h "^test .* FAILED$" "$OUT/it-$i.txt" "$OUT/lib-$i.txt" | sed 's/^test //; s/ \.\.\. FAILED//' | paste -sd, -)
  echo -e "$i\t$start\t$secs\t$(res "$OUT/it-$i.txt" passed)\t$(res "$OUT/it-$i.txt" failed)\t$(res "$OUT/lib-$i.txt" passed)\t$(res "$OUT/lib-$i.txt" failed)\t${fails:--}\t$(cut -d' ' -f1 /proc/loadavg)" >> "$OUT/runs.tsv"
done
