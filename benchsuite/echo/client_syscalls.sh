#!/usr/bin/env bash
# What each echo client does per message against the C server: system calls by kind
# (reads, EAGAIN reads, writes, epoll waits and ctls), context switches, CPU time and
# epoll events per wait. Counts from perf's tracepoints (benchsuite/lib/count_calls.sh),
# so they cost the client no tracing. The C server is pinned to CPU 0, the client to
# CPU 1, 64-byte messages, no warm-up (every message of the run is counted).
#
# Usage: CLIENTS="new=path/to/wirebench main=/work/bin/wb-main-8a723d0" \
#        flock -x /work/locks/gate.lock flock -x /work/locks/bench.lock bash benchsuite/echo/client_syscalls.sh
# Knobs: ROUNDS=1 DURATION=3 POINTS="10x1 100x16" BASE_PORT=9700 OUT=benchsuite/runs/<date>/echo-syscalls
set -euo pipefail
# shellcheck source=../lib/c_echo.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/c_echo.sh" echo-syscalls
knobs ROUNDS=1 DURATION=3 POINTS="10x1 100x16" BASE_PORT=9700
# shellcheck source=../lib/count_calls.sh
source "$REPO/benchsuite/lib/count_calls.sh"
calls_row() { count_calls "$OUT" "$@"; } # TAG UNITS_CMD -- COMMAND...
echo_count_runs calls_row "$COUNT_HEADER" per-point
per_unit_table "$WORK/rows.tsv" | tee "$OUT/summary.md"
