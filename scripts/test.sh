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

cargo build --release
cargo test --release --all-targets --no-fail-fast

echo "test.sh: all tests passed in $(( $(date +%s) - started ))s"
