#!/usr/bin/env python3
"""A foreign gRPC peer for wirebench's tests, on Python's `grpcio` (PyPI).

server PORT [CODE [MESSAGE]]
    A server on 127.0.0.1:PORT with a generic handler: every unary method, its
    request bytes back (CODE absent or 0), or the status CODE with MESSAGE. Prints
    "listening" once bound, then on SIGTERM one line: "calls N ok K".
client TARGET COUNT METHOD [SIZE]
    COUNT unary calls of METHOD with a message of SIZE bytes (default 10), one
    after another on one channel; checks each answer (an echo, or SERVING for the
    health check) and prints "ok N", or "status NAME: DETAILS" and exits 1 on the
    first call that is not OK.
"""
import signal
import sys
import threading
from concurrent import futures

import grpc


def serve(port, code, message):
    lock = threading.Lock()
    counts = {"calls": 0, "ok": 0, "bytes": 0}

    def answer(request, context):
        with lock:
            counts["calls"] += 1
            counts["bytes"] += len(request)
            if code == 0:
                counts["ok"] += 1
        if code != 0:
            context.abort(grpc.StatusCode(code_of(code)), message)
        return request

    class Any(grpc.GenericRpcHandler):
        def service(self, details):
            return grpc.unary_unary_rpc_method_handler(answer)

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    server.add_generic_rpc_handlers((Any(),))
    server.add_insecure_port(f"127.0.0.1:{port}")
    server.start()
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    print("listening", flush=True)
    done.wait()
    server.stop(grace=2).wait()
    with lock:
        print(f"calls {counts['calls']} ok {counts['ok']} bytes {counts['bytes']}", flush=True)


def code_of(number):
    for c in grpc.StatusCode:
        if c.value[0] == number:
            return c.value
    raise SystemExit(f"no status code {number}")


def client(target, count, method, size):
    channel = grpc.insecure_channel(target)
    call = channel.unary_unary(method)
    health = method == "/grpc.health.v1.Health/Check"
    body = b"" if health else bytes((i * 7 + 3) % 251 for i in range(size))
    want = b"\x08\x01" if health else body
    ok = 0
    for _ in range(count):
        try:
            got = call(body, timeout=10)
        except grpc.RpcError as e:
            print(f"status {e.code().name}: {e.details()}", flush=True)
            sys.exit(1)
        if got != want:
            print(f"wrong answer: {len(got)} bytes", flush=True)
            sys.exit(1)
        ok += 1
    print(f"ok {ok}", flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "server":
        code = int(sys.argv[3]) if len(sys.argv) > 3 else 0
        message = sys.argv[4] if len(sys.argv) > 4 else ""
        serve(int(sys.argv[2]), code, message)
    else:
        size = int(sys.argv[5]) if len(sys.argv) > 5 else 10
        client(sys.argv[2], int(sys.argv[3]), sys.argv[4], size)
