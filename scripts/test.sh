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

# ---- AMQP (issue 5): the real peers of tests/amqp*.rs, installed when missing.
# RabbitMQ and haproxy are started by the tests themselves (127.0.0.1 only, no systemd);
# python3-pika is the real client library run against `wirebench serve amqp`.
amqp_missing=()
command -v rabbitmq-server >/dev/null 2>&1 || amqp_missing+=(rabbitmq-server)
command -v haproxy >/dev/null 2>&1 || amqp_missing+=(haproxy)
/usr/bin/python3 -c 'import pika' >/dev/null 2>&1 || amqp_missing+=(python3-pika)
if [ ${#amqp_missing[@]} -gt 0 ]; then
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "test.sh: installing ${amqp_missing[*]}"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${amqp_missing[@]}"
    else
        echo "test.sh: ${amqp_missing[*]} missing and cannot be installed here; their tests will be skipped" >&2
    fi
fi
# The AMQP frame decoder's fuzz target (its own workspace in fuzz/) must keep building.
(cd fuzz && cargo build)
# ---- end AMQP

cargo build --release
cargo test --release --all-targets --no-fail-fast

echo "test.sh: all tests passed in $(( $(date +%s) - started ))s"
