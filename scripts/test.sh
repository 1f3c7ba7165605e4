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

# ---- HTTP peers (issue 3): nginx as a target, wrk/ab/h2load/curl as clients of
# `serve http`. Installed from Debian's packages when missing; the tests start and
# stop them themselves (nginx on a free port with its own config in a temp dir).
http_missing=()
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || http_missing+=(nginx)
command -v wrk >/dev/null 2>&1 || http_missing+=(wrk)
command -v ab >/dev/null 2>&1 || http_missing+=(apache2-utils)
command -v h2load >/dev/null 2>&1 || http_missing+=(nghttp2-client)
command -v curl >/dev/null 2>&1 || http_missing+=(curl)
if [ ${#http_missing[@]} -gt 0 ]; then
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "test.sh: installing ${http_missing[*]}"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${http_missing[@]}"
    else
        echo "test.sh: ${http_missing[*]} missing and cannot be installed here; those HTTP tests will be skipped" >&2
    fi
fi
# ---- end HTTP peers
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
