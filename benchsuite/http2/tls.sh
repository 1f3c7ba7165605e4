#!/usr/bin/env bash
# HTTP/2 generators against nginx's h2 TLS listener (h2 chosen by ALPN): `wirebench
# http --h2 https://` vs h2load, -c 50 -m 10, server CPU 0, generator CPU 1, interleaved
# rounds, requests per generator CPU-second and req/s; benchsuite/http2/client.sh with
# TLS=1 (its knobs apply; raw runs under benchsuite/runs/<date>/http2-tls).
#
# Usage: flock -x /work/locks/bench.lock bash benchsuite/http2/tls.sh
set -euo pipefail
TLS=1 exec bash "$(dirname "${BASH_SOURCE[0]}")/client.sh"
