#!/usr/bin/env bash
# CI step: checks that the fuzz targets (fuzz/, their own cargo workspace) still compile
# against the library, but only when something they depend on changed. A hash of fuzz/
# (targets, manifest, lock, seeds) and of the library's sources, manifest, lock and the
# compiler's version is compared with the stamp left by the last success in
# ${XDG_CACHE_HOME:-$HOME/.cache}/wirebench/fuzz-built; equal means nothing to do.
# `cargo check` on stable, not a fuzzing build: it catches every API break in seconds
# to minutes, where an instrumented nightly build takes much longer and proves no more.
# FORCE=1 checks regardless of the stamp.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
started=$(date +%s)
stamp_dir="${XDG_CACHE_HOME:-$HOME/.cache}/wirebench"
stamp="$stamp_dir/fuzz-built"

# Every input of the fuzz build, in a stable order; build output and crash files excluded.
hash=$(
    {
        rustc -V
        find fuzz src Cargo.toml Cargo.lock \
            \( -path fuzz/target -o -path fuzz/artifacts -o -path fuzz/coverage \) -prune \
            -o -type f -print0 |
            LC_ALL=C sort -z | xargs -0 sha256sum
    } | sha256sum | cut -d' ' -f1
)

if [ "${FORCE:-0}" != 1 ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$hash" ]; then
    echo "fuzz-build.sh: fuzz/ and the library are unchanged since the last check; skipped ($(( $(date +%s) - started ))s)"
    exit 0
fi

cargo check --manifest-path fuzz/Cargo.toml --bins --locked
mkdir -p "$stamp_dir"
echo "$hash" >"$stamp"
echo "fuzz-build.sh: the fuzz targets compile ($(( $(date +%s) - started ))s)"
