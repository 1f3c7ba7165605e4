#!/usr/bin/env bash
# Builds wirebench and runs every test (unit and integration) in release mode.
# Installs what the tests need (openssl, for s_client and test certificates) when
# running as root on a Debian-like system and it is missing.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
started=$(date +%s)

if ! command -v openssl >/dev/null 2>&1; then
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "test.sh: installing openssl"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssl
    else
        echo "test.sh: openssl is missing and cannot be installed here; its tests will be skipped" >&2
    fi
fi

# --- suites and reports (issue 7): headless Chromium opens the HTML report in a
# test; python3 runs a foreign echo server (tests/fixtures/echo_server.py); perf
# records a server for --profile.
suite_need=()
command -v chromium >/dev/null 2>&1 || suite_need+=(chromium)
command -v python3 >/dev/null 2>&1 || suite_need+=(python3)
command -v perf >/dev/null 2>&1 || suite_need+=(linux-perf)
if [ ${#suite_need[@]} -gt 0 ]; then
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "test.sh: installing ${suite_need[*]}"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${suite_need[@]}"
    else
        echo "test.sh: missing ${suite_need[*]}; the suite report test will fail" >&2
    fi
fi
# --- end of suites and reports

cargo build --release
cargo test --release --all-targets --no-fail-fast

echo "test.sh: all tests passed in $(( $(date +%s) - started ))s"
