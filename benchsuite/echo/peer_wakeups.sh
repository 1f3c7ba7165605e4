#!/usr/bin/env bash
# How often the C echo server (the peer of every echo client here) sleeps and is woken
# per message, under the C client and under each wirebench in $CLIENTS, and how often
# the client itself is (benchsuite/lib/wakeups.sh says what is counted). The server is
# pinned to CPU 0, the client to CPU 1, 64-byte messages, one server per client run.
#
# Usage: CLIENTS="new=path/to/wirebench main=/work/bin/wb-main-51ec707" \
#        flock -x /work/locks/gate.lock flock -x /work/locks/bench.lock bash benchsuite/echo/peer_wakeups.sh
# Knobs: ROUNDS=1 DURATION=3 POINTS="100x16" BASE_PORT=9800 OUT=benchsuite/runs/<date>/echo-wakeups
set -euo pipefail
# shellcheck source=../lib/c_echo.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/c_echo.sh" echo-wakeups
knobs ROUNDS=1 DURATION=3 POINTS="100x16" BASE_PORT=9800
# shellcheck source=../lib/wakeups.sh
source "$REPO/benchsuite/lib/wakeups.sh"
wakeups_row() { count_wakeups "$OUT" "$1" "$PID" "${@:2}"; } # TAG UNITS_CMD -- COMMAND...
# A fresh server per run: its wake-ups are its own client's only.
echo_count_runs wakeups_row "$WAKE_HEADER" fresh
wakeups_table "$WORK/rows.tsv" | tee "$OUT/summary.md"
