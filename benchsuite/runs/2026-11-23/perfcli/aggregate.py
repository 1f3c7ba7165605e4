"""Ratios of the perfcli runs (BENCHMARKS.md, "Client: per-request cost and memory,
again"): each echo-<bin>-rN / http-<bin>-rN directory is one round of
benchsuite/echo/run.sh or benchsuite/http/run.sh (ROUNDS=1) with that binary; the
ratios are against the C client / wrk of the same run, median [min-max] over rounds."""
import csv, glob, os, statistics, sys

here = os.path.dirname(os.path.abspath(__file__))


def rows(path):
    return list(csv.DictReader(open(path), delimiter="\t"))


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def fmt(vals):
    ok = [v for v in vals if v is not None]
    if not ok:
        return "n/a"
    return f"{statistics.median(ok):.3f}x [{min(ok):.3f}-{max(ok):.3f}] (n={len(ok)})"


for binary in ("before", "after"):
    echo = {}
    for d in sorted(glob.glob(f"{here}/echo-{binary}-r*/raw.tsv")):
        by = {(r["point"], r["what"]): r for r in rows(d)}
        for point in ("10x1", "100x16"):
            a, b = by.get((point, "a")), by.get((point, "b"))
            if not a or not b:
                continue
            ma, mb = num(a["msgs_per_s"]), num(b["msgs_per_s"])
            pa = ma * num(a["wall_s"]) / num(a["cpu_s"]) if ma else None
            pb = mb * num(b["wall_s"]) / num(b["cpu_s"]) if mb else None
            echo.setdefault((point, "msgs/s"), []).append(mb / ma if ma and mb else None)
            echo.setdefault((point, "per CPU-s"), []).append(pb / pa if pa and pb else None)
    for (point, what), v in sorted(echo.items()):
        print(f"echo {binary} {point} wirebench/C {what}: {fmt(v)}")
    http = {}
    for d in sorted(glob.glob(f"{here}/http-{binary}-r*/raw.tsv")):
        by = {r["tag"]: r for r in rows(d)}
        for peer in ("log", "nolog"):
            for c in (50, 200):
                w, g = by.get(f"nginx-{peer}_wrk_c{c}"), by.get(f"nginx-{peer}_wb_c{c}")
                if not w or not g:
                    continue
                rw, rg = num(w["req_per_s"]), num(g["req_per_s"])
                cw = num(w["requests"]) / num(w["cpu_s"]) if num(w["cpu_s"]) else None
                cg = num(g["requests"]) / num(g["cpu_s"]) if num(g["cpu_s"]) else None
                http.setdefault((peer, c, "req/s"), []).append(rg / rw if rw and rg else None)
                http.setdefault((peer, c, "per CPU-s"), []).append(cg / cw if cw and cg else None)
    for (peer, c, what), v in sorted(http.items()):
        print(f"http {binary} nginx-{peer} c={c} wirebench/wrk {what}: {fmt(v)}")
