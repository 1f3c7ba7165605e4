#!/usr/bin/env python3
"""The soak's hostile mix against one wirebench server (`serve http`, `serve redis` or
`serve ws`), run beside a well-behaved load by benchsuite/soak/soak.sh.

For --duration seconds it keeps up, at once:
  drops     connects-and-drops (connect, close) at --drops-per-minute;
  garbage   sessions that make one valid request, read its answer, then send bytes the
            server must refuse (HTTP: a NUL and random bytes; RESP: `*` and a length
            that is not a number; WebSocket: a frame with a reserved opcode), and read
            until the server hangs up;
  resets    sessions that send half a request and reset the connection (SO_LINGER 0);
  tricklers --tricklers connections that each send one byte a second of a request that
            never ends (HTTP: its head, or its body; RESP: a SET; WebSocket: the
            upgrade request, or a frame after it), reconnecting when the server closes;
  floods    (ws) --floods connections that each flood pings for --flood-seconds while
            reading their pongs slowly (4 KiB every 100 ms), then send a last ping of
            their own and read the pongs up to its pong, echo one message and close
            cleanly, again and again. The server may answer pings it reads back to back
            with one pong (RFC 6455 5.5.3): fewer pongs than pings is right, more is an
            anomaly, and the server counts every ping.
Then it stops: the tricklers send no more and wait up to --grace seconds for the
server to close them; the ones still open are closed here and counted as held.

Every client counts what it did and what the server answered; the summary (--summary
FILE, JSON) gives those counts and `server_counts`: what the server's own counters
must have gained from this mix (accepts, requests answered and the protocol's own),
so benchsuite/soak/check.py can hold the server's counts to the load's and this mix's
exactly. Anything unexpected (a refused connect, a wrong answer, a pong missing) is an
anomaly, counted by kind with its first words. Python 3 standard library only.
"""

import argparse
import base64
import hashlib
import json
import os
import random
import select
import socket
import struct
import sys
import threading
import time

IO_TIMEOUT = 30.0  # seconds any one blocking step may take before it is an anomaly


class Anomaly(Exception):
    """Something a well-behaved server would not do: counted, never fatal."""


class Tally:
    """Counters of one activity, written by its own thread only."""

    def __init__(self):
        self.counts = {}
        self.anomalies = {}

    def add(self, name, n=1):
        self.counts[name] = self.counts.get(name, 0) + n

    def anomaly(self, kind, words):
        first = self.anomalies.setdefault(kind, {"count": 0, "first": str(words)[:200]})
        first["count"] += 1


class Conn:
    """A blocking client connection with a read buffer."""

    def __init__(self, target):
        self.sock = socket.create_connection(target, timeout=IO_TIMEOUT)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def send(self, data):
        self.sock.sendall(data)

    def more(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise Anomaly("the server hung up early")
        self.buf += chunk

    def until(self, delim, limit=1 << 20):
        while delim not in self.buf:
            if len(self.buf) > limit:
                raise Anomaly(f"no {delim!r} in {len(self.buf)} bytes")
            self.more()
        at = self.buf.index(delim) + len(delim)
        head, self.buf = self.buf[:at], self.buf[at:]
        return head

    def exact(self, n):
        while len(self.buf) < n:
            self.more()
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def to_eof(self, limit=1 << 20):
        """Everything until the server hangs up (a reset counts as a hang-up)."""
        while len(self.buf) <= limit:
            try:
                chunk = self.sock.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            self.buf += chunk
        out, self.buf = self.buf, b""
        return out

    def reset(self):
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.sock.close()

    def close(self):
        self.sock.close()


# ------------------------------------------------------------------ the protocols


def http_response(c):
    """One HTTP/1.1 response with a Content-Length body: (status, body)."""
    head = c.until(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    return status, c.exact(length)


class Protocol:
    """What the mix needs of a protocol: the server's address, its opening exchange
    (none here), a valid exchange, garbage and how the server refuses it, half a request,
    and the tricklers' bytes."""

    def __init__(self, target):
        self.target = target

    def open(self, c, t):
        pass


class Http(Protocol):
    name = "http"
    trickles = ("head", "body")

    def exchange(self, c):
        c.send(b"GET / HTTP/1.1\r\nHost: soak\r\n\r\n")
        status, body = http_response(c)
        if (status, body) != (200, b"hello"):
            raise Anomaly(f"GET / answered {status} {body[:60]!r}")

    def garbage(self, rng):
        return b"\x00" + rng.randbytes(rng.randrange(16, 4096))

    def refused(self, answer):
        return answer.startswith(b"HTTP/1.1 400 ")

    def half(self):
        whole = b"POST / HTTP/1.1\r\nHost: soak\r\nContent-Length: 64\r\n\r\n" + b"x" * 64
        return whole[: len(whole) // 2]

    def trickle(self, kind):
        """(whether the opening exchange comes first, the bytes sent at once, the bytes
        then sent one a second): a request head that never ends, or a body."""
        if kind == "head":
            return False, b"", b"GET /" + b"a" * (1 << 20)
        head = b"POST / HTTP/1.1\r\nHost: soak\r\nContent-Length: 1000000\r\n\r\n"
        return False, head, b"b" * 1000000


def resp_command(*words):
    out = b"*%d\r\n" % len(words)
    for w in words:
        out += b"$%d\r\n%s\r\n" % (len(w), w)
    return out


class Redis(Protocol):
    name = "redis"
    trickles = ("command",)

    def exchange(self, c):
        c.send(resp_command(b"PING"))
        got = c.until(b"\r\n")
        if got != b"+PONG\r\n":
            raise Anomaly(f"PING answered {got[:60]!r}")

    def garbage(self, rng):
        # `*` and a length that is not a number: no line break inside it, so the
        # server's first line is exactly this one, and it refuses it.
        junk = bytes(b for b in rng.randbytes(rng.randrange(16, 512)) if b not in b"\r\n")
        return b"*x" + junk + b"\r\n" + rng.randbytes(rng.randrange(0, 2048))

    def refused(self, answer):
        return answer.startswith(b"-ERR Protocol error")

    def half(self):
        whole = resp_command(b"SET", b"soak:reset", b"v" * 64)
        return whole[: len(whole) // 2]

    def trickle(self, kind):
        whole = b"*3\r\n$3\r\nSET\r\n$12\r\nsoak:trickle\r\n$1000000\r\n"
        return False, b"", whole + b"t" * 1000000


WS_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
PING, PONG, TEXT, CLOSE = 0x9, 0xA, 0x1, 0x8
MASK = b"\x37\xfa\x21\x3d"


def ws_frame(opcode, payload, fin=True):
    """A masked client frame."""
    n = len(payload)
    head = bytes([(0x80 if fin else 0) | opcode])
    if n < 126:
        head += bytes([0x80 | n])
    elif n < 65536:
        head += bytes([0x80 | 126]) + struct.pack("!H", n)
    else:
        head += bytes([0x80 | 127]) + struct.pack("!Q", n)
    return head + MASK + bytes(b ^ MASK[i % 4] for i, b in enumerate(payload))


def ws_read_frame(c):
    """One unmasked server frame: (opcode, payload)."""
    b0, b1 = c.exact(2)
    n = b1 & 0x7F
    if n == 126:
        n = struct.unpack("!H", c.exact(2))[0]
    elif n == 127:
        n = struct.unpack("!Q", c.exact(8))[0]
    return b0 & 0x0F, c.exact(n)


def ws_upgrade_request(key):
    return (
        b"GET / HTTP/1.1\r\nHost: soak\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        b"Sec-WebSocket-Key: " + key + b"\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )


class Ws(Protocol):
    name = "ws"
    trickles = ("head", "frame")

    def open(self, c, t):
        key = base64.b64encode(os.urandom(16))
        c.send(ws_upgrade_request(key))
        head = c.until(b"\r\n\r\n")
        accept = base64.b64encode(hashlib.sha1(key + WS_GUID).digest())
        if not head.startswith(b"HTTP/1.1 101 ") or accept not in head:
            raise Anomaly(f"upgrade answered {head[:60]!r}")
        t.add("upgrades")

    def exchange(self, c):
        c.send(ws_frame(TEXT, b"soak"))
        op, payload = ws_read_frame(c)
        if (op, payload) != (TEXT, b"soak"):
            raise Anomaly(f"message answered opcode {op} {payload[:60]!r}")

    def garbage(self, rng):
        # Opcode 0x3 is reserved (RFC 6455 5.2): the server refuses the frame, 1002.
        return ws_frame(0x3, rng.randbytes(rng.randrange(0, 120))) + rng.randbytes(
            rng.randrange(0, 2048)
        )

    def refused(self, answer):
        return answer[:1] == b"\x88" and answer[2:4] == struct.pack("!H", 1002)

    def half(self):
        whole = ws_frame(TEXT, b"r" * 64)
        return whole[: len(whole) // 2]

    def trickle(self, kind):
        if kind == "head":
            request = ws_upgrade_request(base64.b64encode(os.urandom(16)))
            return False, b"", request[:-2] + b"X-Soak: " + b"h" * (1 << 20)
        # After the upgrade, a 1 MB binary frame (under --max-message's 16 MiB) whose
        # payload comes a byte a second: its header, the mask, and zeros masked.
        header = b"\x82\xff" + struct.pack("!Q", 1000000) + MASK
        return True, b"", header + MASK * 250000


PROTOCOLS = {"http": Http, "redis": Redis, "ws": Ws}


# ------------------------------------------------------------------ the activities


def paced(per_s, stop, t, session):
    """Runs `session(t)` `per_s` times a second until `stop`: on a schedule, so a late
    start catches up (at most 5 s of it at once); an anomaly is counted and the next
    session goes on."""
    interval = 1.0 / per_s
    due = time.monotonic()
    while not stop.is_set():
        now = time.monotonic()
        if now < due:
            stop.wait(due - now)
            continue
        due = max(due + interval, now - 5.0)
        try:
            session(t)
        except Exception as e:  # an anomaly, whatever it is: counted, and on
            t.anomaly(type(e).__name__, e)


def connected(proto, t):
    c = Conn(proto.target)
    t.add("connects")
    return c


def drop(proto, t):
    connected(proto, t).close()


def garbage_session(proto, rng, t):
    c = connected(proto, t)
    try:
        proto.open(c, t)
        proto.exchange(c)
        t.add("answered")
        c.send(proto.garbage(rng))
        answer = c.to_eof()
        if not proto.refused(answer):
            raise Anomaly(f"garbage answered {answer[:60]!r}")
        t.add("refused")
    finally:
        c.close()


def reset_session(proto, t):
    c = connected(proto, t)
    try:
        proto.open(c, t)
        c.send(proto.half())
    except BaseException:
        c.close()
        raise
    c.reset()
    t.add("resets")


class Trickler:
    """One trickling connection: its kind, socket, the bytes still to send."""

    def __init__(self, proto, kind, t):
        self.kind = kind
        opening, now, self.rest = proto.trickle(kind)
        self.at = 0
        self.conn = connected(proto, t)
        try:
            if opening:
                proto.open(self.conn, t)
            self.conn.send(now)
        except BaseException:
            self.conn.close()
            raise
        self.conn.sock.setblocking(False)
        self.born = time.monotonic()
        t.add(f"trickle_sessions_{kind}")

    def closed_by_server(self):
        """Whether the server has hung up (what it sent before is read and dropped)."""
        sock = self.conn.sock
        while select.select([sock], [], [], 0)[0]:
            try:
                if not sock.recv(65536):
                    return True
            except (ConnectionResetError, BrokenPipeError):
                return True
            except BlockingIOError:
                return False
        return False

    def step(self):
        """Sends the next byte; False when the server has closed the connection."""
        if self.closed_by_server():
            return False
        try:
            self.at += self.conn.sock.send(self.rest[self.at : self.at + 1])
        except (ConnectionResetError, BrokenPipeError):
            return False
        except BlockingIOError:
            pass
        return True


def trickle(proto, args, stop, t):
    """--tricklers connections, one byte a second each, reopened when the server closes
    one; at the stop, up to --grace seconds for the server to close the rest."""
    kinds = [proto.trickles[i % len(proto.trickles)] for i in range(args.tricklers)]
    slots = [None] * len(kinds)
    while not stop.is_set():
        for i, kind in enumerate(kinds):
            if slots[i] is not None and not slots[i].step():
                ended(slots[i], t, "closed")
                slots[i] = None
            if slots[i] is None:
                try:
                    slots[i] = Trickler(proto, kind, t)
                except Exception as e:  # an anomaly, whatever it is: counted, and on
                    t.anomaly(type(e).__name__, e)
        stop.wait(1.0)
    end = time.monotonic() + args.grace
    while any(slots) and time.monotonic() < end:
        for i, s in enumerate(slots):
            if s is not None and s.closed_by_server():
                ended(s, t, "closed")
                slots[i] = None
        time.sleep(0.2)
    for s in slots:
        if s is not None:
            ended(s, t, "held")


def ended(s, t, how):
    """A trickler's session is over: closed by the server, or still held at the end."""
    lived = time.monotonic() - s.born
    t.add(f"trickle_{how}_{s.kind}")
    key = f"trickle_{how}_{s.kind}_longest_s"
    t.counts[key] = max(t.counts.get(key, 0), round(lived, 1))
    s.conn.close()


PING_PAYLOAD = b"soak-ping-16byte"
SERVER_PONG = bytes([0x80 | PONG, len(PING_PAYLOAD)]) + PING_PAYLOAD
# The flood's last ping: its pong, always sent (the latest ping is never skipped), ends
# the flood's pongs.
LAST_PING_PAYLOAD = b"soak-last-ping!!"
LAST_PONG = bytes([0x80 | PONG, len(LAST_PING_PAYLOAD)]) + LAST_PING_PAYLOAD


def count_pongs(buf):
    """The flood's pongs at the start of `buf`: (how many, the bytes after them). The
    server may answer pings read back to back with one pong (RFC 6455 5.5.3), so pongs
    are at most pings; any other whole frame is an anomaly."""
    size = len(SERVER_PONG)
    n = 0
    while buf[n * size:(n + 1) * size] == SERVER_PONG:
        n += 1
    rest = buf[n * size:]
    if len(rest) >= size and not rest.startswith(LAST_PONG):
        raise Anomaly(f"a frame that is not our pong after {n} pongs: {rest[:40]!r}")
    return n, rest


def flood_session(proto, args, stop, t):
    """Floods pings for --flood-seconds, reading 4 KiB of pongs every 100 ms; then sends
    a last ping of its own and reads every pong up to its answer, has one message echoed
    and closes cleanly."""
    c = connected(proto, t)
    try:
        proto.open(c, t)
        pings, pongs = flood(c, args, stop)
        c.send(ws_frame(PING, LAST_PING_PAYLOAD))
        pings += 1
        while True:
            n, c.buf = count_pongs(c.buf)
            pongs += n
            if c.buf.startswith(LAST_PONG):
                c.buf = c.buf[len(LAST_PONG):]
                pongs += 1
                break
            c.more()
        if pongs > pings:
            raise Anomaly(f"{pongs} pongs for {pings} pings")
        t.add("pings", pings)
        t.add("pongs", pongs)
        proto.exchange(c)
        t.add("answered")
        c.send(ws_frame(CLOSE, struct.pack("!H", 1000)))
        op, payload = ws_read_frame(c)
        if (op, payload[:2]) != (CLOSE, struct.pack("!H", 1000)):
            raise Anomaly(f"close answered opcode {op} {payload[:60]!r}")
        if c.to_eof():
            raise Anomaly("bytes after the server's close")
        t.add("clean_closes")
    finally:
        c.close()


def flood(c, args, stop):
    """The flood itself: (pings written, pongs read so far); the socket is left blocking."""
    ping = ws_frame(PING, PING_PAYLOAD)
    block = ping * (65536 // len(ping))
    sock = c.sock
    sock.setblocking(False)
    sent = pongs = 0
    end = time.monotonic() + args.flood_seconds
    next_read = time.monotonic() + 0.1
    while time.monotonic() < end and not stop.is_set():
        if select.select([], [sock], [], 0.05)[1]:
            try:
                sent += sock.send(block[sent % len(block):])
            except BlockingIOError:
                pass
        if time.monotonic() >= next_read:
            next_read += 0.1
            try:
                c.buf += sock.recv(4096)
            except BlockingIOError:
                pass
            n, c.buf = count_pongs(c.buf)
            pongs += n
    sock.settimeout(IO_TIMEOUT)
    rest = -sent % len(ping)
    if rest:
        sock.sendall(ping[len(ping) - rest:])
        sent += rest
    return sent // len(ping), pongs


def floods(proto, args, stop, t):
    while not stop.is_set():
        try:
            flood_session(proto, args, stop, t)
        except Exception as e:  # an anomaly, whatever it is: counted, and on
            t.anomaly(type(e).__name__, e)
            stop.wait(1.0)


# ------------------------------------------------------------------ the run


def server_counts(proto, c):
    """What the server's own counters gained from this mix."""
    out = {"accepts": c.get("connects", 0), "requests": c.get("answered", 0)}
    heads = c.get("trickle_closed_head", 0)
    if proto.name == "http":
        out["header_timeouts"] = heads
    elif proto.name == "redis":
        out["protocol_errors"] = c.get("refused", 0)
        out["error_replies"] = c.get("refused", 0)
    else:
        out["header_timeouts"] = heads
        out["upgrades"] = c.get("upgrades", 0)
        out["messages"] = c.get("answered", 0)
        out["bad_frames"] = c.get("refused", 0)
        out["clean_closes"] = c.get("clean_closes", 0)
        # The server counts every ping it reads, though pings read back to back get
        # one pong (RFC 6455 5.5.3): its count is the pings sent, not the pongs read.
        out["pings_answered"] = c.get("pings", 0)
    return out


def activities(proto, args, stop):
    """(name, tally, thread body) for each activity of the mix."""
    rng = random.Random(args.seed)
    acts = []
    if args.drops_per_minute > 0:
        acts.append(("drops", lambda t: paced(args.drops_per_minute / 60.0, stop, t, lambda t: drop(proto, t))))
    if args.garbage_per_s > 0:
        acts.append(("garbage", lambda t: paced(args.garbage_per_s, stop, t, lambda t: garbage_session(proto, rng, t))))
    if args.resets_per_s > 0:
        acts.append(("resets", lambda t: paced(args.resets_per_s, stop, t, lambda t: reset_session(proto, t))))
    if args.tricklers > 0:
        acts.append(("tricklers", lambda t: trickle(proto, args, stop, t)))
    if proto.name == "ws":
        for i in range(args.floods):
            acts.append((f"flood{i}", lambda t: floods(proto, args, stop, t)))
    return [(name, Tally(), body) for name, body in acts]


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--protocol", choices=sorted(PROTOCOLS), required=True)
    p.add_argument("--target", required=True, help="HOST:PORT of the server")
    p.add_argument("--duration", type=float, required=True, help="seconds")
    p.add_argument("--summary", required=True, help="the JSON summary to write")
    p.add_argument("--drops-per-minute", type=float, default=10000)
    p.add_argument("--garbage-per-s", type=float, default=2)
    p.add_argument("--resets-per-s", type=float, default=5)
    p.add_argument("--tricklers", type=int, default=20)
    p.add_argument("--floods", type=int, default=2)
    p.add_argument("--flood-seconds", type=float, default=30)
    p.add_argument("--grace", type=float, default=15, help="seconds the tricklers wait at the end")
    p.add_argument("--seed", type=int, default=27)
    return p.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    host, _, port = args.target.rpartition(":")
    proto = PROTOCOLS[args.protocol]((host, int(port)))
    stop = threading.Event()
    acts = activities(proto, args, stop)
    threads = [threading.Thread(target=body, args=(t,), name=name, daemon=True) for name, t, body in acts]
    started = time.monotonic()
    for th in threads:
        th.start()
    stop.wait(args.duration)
    stop.set()
    stopped = time.monotonic()
    for th in threads:
        th.join(args.grace + 2 * IO_TIMEOUT)
    late = [th.name for th in threads if th.is_alive()]
    summary = summarize(proto, args, acts, stopped - started, late)
    with open(args.summary, "w") as f:
        json.dump(summary, f, indent=1, sort_keys=True)
    print(json.dumps({"protocol": proto.name, "anomalies": summary["anomalies"]}))
    return 0


def summarize(proto, args, acts, ran_s, late):
    total = {}
    for _, t, _ in acts:
        for k, v in t.counts.items():
            total[k] = max(total.get(k, 0), v) if k.endswith("_longest_s") else total.get(k, 0) + v
    anomalies = sum(a["count"] for _, t, _ in acts for a in t.anomalies.values()) + len(late)
    return {
        "protocol": proto.name,
        "target": args.target,
        "ran_s": round(ran_s, 3),
        "settings": {k: v for k, v in vars(args).items() if k not in ("summary",)},
        "activities": {name: {"counts": t.counts, "anomalies": t.anomalies} for name, t, _ in acts},
        "totals": total,
        "drops_per_minute_achieved": round(
            sum(t.counts.get("connects", 0) for name, t, _ in acts if name == "drops") * 60.0 / ran_s, 1
        ),
        "server_counts": server_counts(proto, total),
        "still_running_at_the_end": late,
        "anomalies": anomalies,
    }


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
