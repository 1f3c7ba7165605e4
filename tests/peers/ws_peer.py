#!/usr/bin/env python3
"""A foreign WebSocket peer for wirebench's tests, on Python's `websockets` library.

server PORT [PING_MS] [SUBPROTOCOL]
    An echo server on 127.0.0.1:PORT (every message back with its type), pinging
    every PING_MS ms when given (0: never); prints "listening" once bound, then on
    SIGTERM one line: "messages N text T binary B connections C".
client URI COUNT SIZE [text|binary] [FRAGMENTS]
    Sends COUNT messages of SIZE bytes (every other one in FRAGMENTS frames when
    given), checks each echo (bytes and type), closes with 1000 and prints
    "ok N fragmented F" (exit 1 on the first wrong echo).
"""
import asyncio
import signal
import sys

import websockets


async def serve(port, ping_ms, subprotocol):
    counts = {"messages": 0, "text": 0, "binary": 0, "connections": 0}

    async def echo(ws, _path=None):
        counts["connections"] += 1
        try:
            async for msg in ws:
                counts["messages"] += 1
                counts["text" if isinstance(msg, str) else "binary"] += 1
                await ws.send(msg)
        except websockets.ConnectionClosed:
            pass

    stop = asyncio.get_running_loop().create_future()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, lambda: stop.done() or stop.set_result(None))
    kwargs = {"ping_interval": ping_ms / 1000.0 if ping_ms else None, "max_size": 1 << 24}
    if subprotocol:
        kwargs["subprotocols"] = [subprotocol]
    async with websockets.serve(echo, "127.0.0.1", port, **kwargs):
        print("listening", flush=True)
        await stop
    print("messages {messages} text {text} binary {binary} connections {connections}".format(**counts), flush=True)


def message(i, size, text):
    body = "".join(chr(ord("a") + (i + k) % 26) for k in range(size))
    return body if text else body.encode()


async def client(uri, count, size, text, fragments):
    fragmented = 0
    async with websockets.connect(uri, max_size=1 << 24) as ws:
        for i in range(count):
            msg = message(i, size, text)
            if fragments > 1 and i % 2 == 1 and size >= fragments:
                step = -(-size // fragments)
                await ws.send([msg[k:k + step] for k in range(0, size, step)])
                fragmented += 1
            else:
                await ws.send(msg)
            back = await ws.recv()
            if back != msg:
                print(f"wrong echo of message {i}: {back!r:.60}", flush=True)
                sys.exit(1)
    print(f"ok {count} fragmented {fragmented}", flush=True)


def main():
    mode = sys.argv[1]
    if mode == "server":
        ping = int(sys.argv[3]) if len(sys.argv) > 3 else 0
        sub = sys.argv[4] if len(sys.argv) > 4 else None
        asyncio.run(serve(int(sys.argv[2]), ping, sub))
    else:
        text = len(sys.argv) > 5 and sys.argv[5] == "text"
        frags = int(sys.argv[6]) if len(sys.argv) > 6 else 1
        asyncio.run(client(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), text, frags))


if __name__ == "__main__":
    main()
