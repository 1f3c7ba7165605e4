#!/usr/bin/env bash
# Fuzzing: every parser that reads the network or a file (fuzz/fuzz_targets/*.rs, each
# one line calling src/fuzzing/<target>.rs), each run for a set time with libFuzzer on
# a scratch copy of its corpus; then the fewest inputs the run found that add coverage
# join fuzz/corpus/<target>/ (libFuzzer's -set_cover_merge=1 over edges, without hit
# counts: a far smaller cover than `cargo fuzz cmin`'s -merge=1, e.g. merge_shards kept
# 211 files, 234 KB, where -merge=1 kept 782), so the checked-in corpus, which
# tests/it/fuzz_corpus.rs replays in CI, keeps what fuzzing reached.
#
# Usage: bash benchsuite/fuzz.sh [TARGET...]      (from anywhere; default: every target)
# Knobs (environment):
#   SECONDS_PER_TARGET=600  fuzzing time per target
#   PARALLEL=2              targets fuzzed at the same time (one core each)
#   NICE=19                 niceness of the fuzzers, so builds and tests keep priority
#   TIMEOUT=60              seconds one input may take before libFuzzer calls it a hang:
#                           a niced fuzzer on a busy machine can wait more than 10 s for
#                           a CPU, and an input that ran in 60 ms was reported as a hang
#   OUT=benchsuite/runs/<date>/fuzz   logs and summary.tsv (no corpora)
#   SCRATCH=<mktemp -d>     the corpora grow here; removed at the end unless given
#   BUILD_LOCK=FILE         hold `flock -s FILE` around the build (a shared build machine)
#   BUILD=0                 run the targets as last built (no rebuild of a changed tree)
#   KEEP_CORPUS=0           leave fuzz/corpus/ as it was (no merge of what the run found)
#   KEEP_GOING=1            go on fuzzing after a crash (libFuzzer's fork mode), so each
#                           target gets its whole time and reports every distinct crash
# Needs the nightly toolchain; installs cargo-fuzz from crates.io when it is missing.
# Prints executions, execs/s, corpus size and crashes per target; crash inputs are
# kept in fuzz/artifacts/<target>/. Exits 1 when any target crashed (or leaked,
# timed out, ran out of memory), 2 when it could not build or run.
set -euo pipefail

SECONDS_PER_TARGET=${SECONDS_PER_TARGET:-600}
PARALLEL=${PARALLEL:-2}
NICE=${NICE:-19}
TIMEOUT=${TIMEOUT:-60}

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
FUZZ="$REPO/fuzz"
OUT=${OUT:-$REPO/benchsuite/runs/$(date -u +%F)/fuzz}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
if [ -n "${SCRATCH:-}" ]; then
    mkdir -p "$SCRATCH"
else
    SCRATCH=$(mktemp -d)
    trap 'rm -rf "$SCRATCH"' EXIT
fi

if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    echo "fuzz.sh: installing cargo-fuzz (crates.io)"
    cargo install cargo-fuzz --locked
fi

cd "$FUZZ"
if [ $# -gt 0 ]; then
    targets=("$@")
else
    mapfile -t targets < <(cargo +nightly fuzz list)
fi

# Build once, then run the binaries: `cargo fuzz run` would rebuild first, and a source
# edited while a long run is under way would change the code under test half-way.
build=(cargo +nightly fuzz build)
if [ -n "${BUILD_LOCK:-}" ]; then
    build=(flock -s "$BUILD_LOCK" "${build[@]}")
fi
if [ "${BUILD:-1}" = 0 ]; then
    echo "fuzz.sh: BUILD=0, running the targets as last built"
elif ! "${build[@]}"; then
    echo "fuzz.sh: the fuzz targets did not build" >&2
    exit 2
fi
# Run copies, so the targets can be rebuilt (a fix under way) while these runs go on.
BUILT="$FUZZ/target/$(rustc +nightly -vV | sed -n 's/^host: //p')/release"
BIN="$SCRATCH/bin"
mkdir -p "$BIN"
for t in "${targets[@]}"; do
    if [ ! -x "$BUILT/$t" ]; then
        echo "fuzz.sh: no fuzz target named $t (cargo +nightly fuzz list)" >&2
        exit 2
    fi
    cp "$BUILT/$t" "$BIN/$t"
done

# One target: libFuzzer on a scratch copy of the seeds; its log in $OUT/<target>.log.
run_one() {
    local t=$1 corpus="$SCRATCH/corpus/$1" artifacts="$FUZZ/artifacts/$1"
    rm -rf "$corpus"
    mkdir -p "$corpus" "$artifacts"
    cp -r "$FUZZ/corpus/$t/." "$corpus/"
    touch "$SCRATCH/$t.start"
    local rc=0 mode=()
    if [ "${KEEP_GOING:-0}" = 1 ]; then
        mode=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
    fi
    nice -n "$NICE" "$BIN/$t" "$corpus" "${mode[@]}" \
        -artifact_prefix="$artifacts/" \
        -max_total_time="$SECONDS_PER_TARGET" \
        -rss_limit_mb=2048 -timeout="$TIMEOUT" -print_final_stats=1 \
        >"$OUT/$t.log" 2>&1 || rc=$?
    echo "$rc" >"$SCRATCH/$t.rc"
}

started=$(date -u +%FT%TZ)
echo "fuzz.sh: ${#targets[@]} targets, ${SECONDS_PER_TARGET}s each, $PARALLEL at a time, logs in $OUT"
running=0
for t in "${targets[@]}"; do
    run_one "$t" &
    running=$((running + 1))
    if [ "$running" -ge "$PARALLEL" ]; then
        wait -n || true
        running=$((running - 1))
    fi
done
wait

# The summary, from libFuzzer's final stats and the files it left.
crashed=0
printf 'target\texecutions\texecs_per_s\tseeds\tcorpus\tcrashes\texit\n' >"$OUT/summary.tsv"
for t in "${targets[@]}"; do
    log="$OUT/$t.log"
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    if [ -z "$execs" ]; then
        # Fork mode prints no final stats; its last status line has the totals:
        # "#EXECS: cov: .. corp: .. exec/s: LAST_JOB oom/timeout/crash: O/T/C time: SECONDSs".
        # Its exec/s is the last job's, so the average is worked out from the totals.
        last=$(grep -E '^#[0-9]+: cov:' "$log" | tail -1 || true)
        execs=$(sed -nE 's/^#([0-9]+):.*/\1/p' <<<"$last")
        secs=$(sed -nE 's/.* time: ([0-9]+)s.*/\1/p' <<<"$last")
        if [ -n "$execs" ] && [ "${secs:-0}" -gt 0 ]; then
            rate=$((execs / secs))
        fi
    fi
    seeds=$(find "$FUZZ/corpus/$t" -type f | wc -l)
    corpus=$(find "$SCRATCH/corpus/$t" -type f | wc -l)
    # Crash, leak, timeout and out-of-memory inputs this run wrote.
    crashes=$(find "$FUZZ/artifacts/$t" -type f -newer "$SCRATCH/$t.start" | wc -l)
    rc=$(cat "$SCRATCH/$t.rc")
    if [ "$rc" -ne 0 ] || [ "$crashes" -gt 0 ]; then
        crashed=$((crashed + 1))
        [ "$crashes" -gt 0 ] || crashes=1
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "${execs:-?}" "${rate:-?}" "$seeds" "$corpus" \
        "$crashes" "$rc" >>"$OUT/summary.tsv"
done
# What the run found that adds coverage joins the checked-in corpus, seeds kept; inputs
# that crash are left out (they go to fuzz/regressions/<target>/ once fixed, by hand).
# Not niced: it is short, and a starved merge takes longer than the fuzzing did.
if [ "${KEEP_CORPUS:-1}" = 1 ]; then
    for t in "${targets[@]}"; do
        before=$(find "$FUZZ/corpus/$t" -type f | wc -l)
        "$BIN/$t" -set_cover_merge=1 -use_counters=0 -rss_limit_mb=2048 -timeout="$TIMEOUT" \
            -artifact_prefix="$FUZZ/artifacts/$t/" \
            "$FUZZ/corpus/$t" "$SCRATCH/corpus/$t" >"$OUT/$t.merge.log" 2>&1 ||
            echo "fuzz.sh: merging $t's corpus failed (see $OUT/$t.merge.log)" >&2
        after=$(find "$FUZZ/corpus/$t" -type f | wc -l)
        echo "fuzz.sh: $t: fuzz/corpus/$t $before -> $after files"
    done
fi
column -t -s $'\t' "$OUT/summary.tsv"
echo "fuzz.sh: started $started, ended $(date -u +%FT%TZ)"
if [ "$crashed" -gt 0 ]; then
    echo "fuzz.sh: $crashed targets crashed; inputs in $FUZZ/artifacts/, details in $OUT/*.log" >&2
    exit 1
fi
echo "fuzz.sh: no crash"
