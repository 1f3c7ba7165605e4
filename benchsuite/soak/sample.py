#!/usr/bin/env python3
"""The soak's memory and descriptor sampler (benchsuite/soak/soak.sh).

  sample.py --every 10 --out FILE NAME=PID...   a row per process every 10 s (from 0)
                                                until SIGTERM: t_s, name, pid, rss_bytes,
                                                fds; a process that is exiting or
                                                has exited is left out
  sample.py --fds PID                           the descriptors of PID, once

A wirebench server thread keeps its sockets in a descriptor table of its own
(docs/serve.md, Caveats), so /proc/PID/fd shows only the main thread's: descriptors
here are counted over every table of the process, each table once (threads that
share one list the same descriptors).
"""

import argparse
import os
import signal
import sys
import time


def rss_bytes(pid):
    """VmRSS; None once the process is exiting (a zombie's status has no VmRSS)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return None


def fd_count(pid):
    """Descriptors over the process's tables, each table counted once."""
    tables = set()
    for tid in os.listdir(f"/proc/{pid}/task"):
        d = f"/proc/{pid}/task/{tid}/fd"
        try:
            names = os.listdir(d)
        except FileNotFoundError:
            continue  # the thread ended meanwhile
        table = []
        for n in names:
            try:
                table.append((n, os.readlink(f"{d}/{n}")))
            except FileNotFoundError:
                pass  # closed meanwhile
        tables.add(frozenset(table))
    return sum(len(t) for t in tables)


def sample(out, t, procs):
    for name, pid in procs:
        try:
            row = (rss_bytes(pid), fd_count(pid))
        except (FileNotFoundError, ProcessLookupError):
            continue
        if row[0] is None:
            continue
        out.write(f"{t:.1f}\t{name}\t{pid}\t{row[0]}\t{row[1]}\n")
    out.flush()


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--every", type=float, default=10.0)
    p.add_argument("--out")
    p.add_argument("--fds", type=int, help="print the descriptors of this PID and exit")
    p.add_argument("procs", nargs="*", help="NAME=PID")
    a = p.parse_args(argv)
    if a.fds is not None:
        print(fd_count(a.fds))
        return 0
    procs = [(s.partition("=")[0], int(s.partition("=")[2])) for s in a.procs]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    start = time.monotonic()
    with open(a.out, "w") as out:
        out.write("t_s\tname\tpid\trss_bytes\tfds\n")
        n = 0
        while True:
            sample(out, time.monotonic() - start, procs)
            n += 1
            time.sleep(max(0.0, start + n * a.every - time.monotonic()))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
