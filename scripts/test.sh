#!/usr/bin/env bash
# Runs every test (unit and integration) with the `ci` profile (optimised, no LTO).
# First installs, as root from Debian's packages, the real peers the tests drive:
# nginx, wrk, ab, h2load, curl, RabbitMQ, haproxy, tinyproxy (the -x proxy), python3-pika, Chromium, perf,
# openssl, python3-yaml (reads the rendered Kubernetes manifests), Slurm and munge (the sharded
# runs), iproute2 (network namespaces), python3-websockets, redis-server and redis-tools
# (redis-cli, redis-benchmark), python3-pip (for Python's hdrhistogram, from PyPI), prometheus (scrapes --metrics-listen); then websocat (crates.io), grpcio (PyPI, in a venv), vegeta and ghz (Go module proxy). That is about 150 packages and a few minutes the first time; nothing
# after. Without root a missing peer skips its tests and says so; under CI=true a
# missing peer fails the run, so CI cannot pass by skipping.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
started=$(date +%s)

# command name -> Debian package
declare -A peers=(
    [openssl]=openssl [nginx]=nginx [wrk]=wrk [ab]=apache2-utils [h2load]=nghttp2-client
    [curl]=curl [rabbitmq-server]=rabbitmq-server [haproxy]=haproxy [chromium]=chromium
    [perf]=linux-perf [python3]=python3
    [srun]=slurm-wlm [slurmctld]=slurm-wlm [slurmd]=slurm-wlm [munged]=munge [ip]=iproute2
    [setpriv]=util-linux [tinyproxy]=tinyproxy
    [redis-server]=redis-server [redis-cli]=redis-tools [redis-benchmark]=redis-tools
    [prometheus]=prometheus
)
missing=()
for cmd in "${!peers[@]}"; do
    command -v "$cmd" >/dev/null 2>&1 || [ -x "/usr/sbin/$cmd" ] || missing+=("${peers[$cmd]}")
done
/usr/bin/python3 -c 'import pika' >/dev/null 2>&1 || missing+=(python3-pika)
/usr/bin/python3 -c 'import yaml' >/dev/null 2>&1 || missing+=(python3-yaml)
/usr/bin/python3 -c 'import websockets' >/dev/null 2>&1 || missing+=(python3-websockets)
# pip, to install the Python hdrhistogram package (PyPI; not packaged by Debian) below.
/usr/bin/python3 -m pip --version >/dev/null 2>&1 || missing+=(python3-pip)
# One package may give several commands (redis-tools): name it once.
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u | sed '/^$/d')
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "test.sh: installing ${missing[*]} (Debian packages, first run only)"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
    elif [ "${CI:-}" = true ]; then
        echo "test.sh: CI=true and ${missing[*]} cannot be installed here (needs root and apt-get)" >&2
        exit 1
    else
        echo "test.sh: ${missing[*]} missing and cannot be installed here; their tests will be skipped" >&2
    fi
fi
# websocat (crates.io), a WebSocket client independent of wirebench: built once into
# ~/.cache/wirebench/websocat (a few minutes), where tests/it/ws_peers.rs looks first.
websocat_root="${HOME}/.cache/wirebench/websocat"
if [ ! -x "$websocat_root/bin/websocat" ] && ! command -v websocat >/dev/null 2>&1; then
    echo "test.sh: building websocat into $websocat_root (first run only)"
    if ! cargo install websocat --locked --quiet --root "$websocat_root"; then
        if [ "${CI:-}" = true ]; then
            echo "test.sh: CI=true and websocat could not be built" >&2
            exit 1
        fi
        echo "test.sh: websocat could not be built; its tests will be skipped" >&2
    fi
fi
# vegeta (Go module proxy), the reference for `--request-set`'s targets format: built once
# into ~/.cache/wirebench/vegeta, where tests/it/http_request_set.rs looks first.
vegeta_bin="${HOME}/.cache/wirebench/vegeta/bin"
if [ ! -x "$vegeta_bin/vegeta" ] && ! command -v vegeta >/dev/null 2>&1; then
    echo "test.sh: installing vegeta into $vegeta_bin (first run only)"
    if ! command -v go >/dev/null 2>&1 || ! GOBIN="$vegeta_bin" go install github.com/tsenart/vegeta/v12@latest; then
        if [ "${CI:-}" = true ]; then
            echo "test.sh: CI=true and vegeta could not be installed (needs go)" >&2
            exit 1
        fi
        echo "test.sh: vegeta could not be installed; its comparison will be skipped" >&2
    fi
fi
# Python's hdrhistogram package (PyPI, module hdrh), the reader of --hlog's interval
# logs in tests/it/intervals.rs: installed once into ~/.cache/wirebench/pylib (pip
# --target, so Debian's own Python packages stay untouched), where the test looks.
pylib="${HOME}/.cache/wirebench/pylib"
if ! PYTHONPATH="$pylib" /usr/bin/python3 -c 'import hdrh.log' >/dev/null 2>&1; then
    echo "test.sh: installing the Python hdrhistogram package into $pylib (first run only)"
    if ! /usr/bin/python3 -m pip install --quiet --disable-pip-version-check --target "$pylib" hdrhistogram; then
        if [ "${CI:-}" = true ]; then
            echo "test.sh: CI=true and the Python hdrhistogram package could not be installed" >&2
            exit 1
        fi
        echo "test.sh: the Python hdrhistogram package could not be installed; its test will be skipped" >&2
    fi
fi
# grpcio (PyPI), the gRPC server and client independent of wirebench that
# tests/it/grpc_peers.rs drives: a venv of Debian's python3 in ~/.cache/wirebench/grpcio.
grpcio_venv="${HOME}/.cache/wirebench/grpcio"
if ! "$grpcio_venv/bin/python3" -c 'import grpc' >/dev/null 2>&1; then
    echo "test.sh: installing grpcio into $grpcio_venv (first run only)"
    if ! { /usr/bin/python3 -m venv "$grpcio_venv" && "$grpcio_venv/bin/pip" install -q grpcio; }; then
        if [ "${CI:-}" = true ]; then
            echo "test.sh: CI=true and grpcio could not be installed" >&2
            exit 1
        fi
        echo "test.sh: grpcio could not be installed; its tests will be skipped" >&2
    fi
fi
# ghz (a Go module, through the Go module proxy), a gRPC load tool independent of
# wirebench: built once into ~/.cache/wirebench/ghz, where tests/it/grpc_peers.rs looks first.
ghz_root="${HOME}/.cache/wirebench/ghz"
if [ ! -x "$ghz_root/bin/ghz" ] && ! command -v ghz >/dev/null 2>&1; then
    echo "test.sh: building ghz into $ghz_root (first run only)"
    go=$(command -v go || echo /usr/local/go/bin/go)
    if ! GOBIN="$ghz_root/bin" "$go" install github.com/bojand/ghz/cmd/ghz@v0.93.0; then
        if [ "${CI:-}" = true ]; then
            echo "test.sh: CI=true and ghz could not be built" >&2
            exit 1
        fi
        echo "test.sh: ghz could not be built; its test will be skipped" >&2
    fi
fi
installed=$(date +%s)

# One cargo invocation builds the binary (the integration tests need it) and every test
# target side by side: a separate `cargo build` first left a core idle in its single-crate
# phases.
# Arguments go to cargo: `--no-run` builds without running (.ci/run builds first, then
# runs the fuzz targets' check beside the tests).
cargo test --profile ci --all-targets --no-fail-fast "$@"

did="all tests passed"
[[ " $* " == *" --no-run "* ]] && did="built the tests"
echo "test.sh: $did in $(( $(date +%s) - installed ))s (installing took $(( installed - started ))s)"
