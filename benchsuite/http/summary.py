"""Summary of benchsuite/http/run.sh: medians and ranges over rounds, ratios per round."""
import csv, os, platform, statistics, sys, time

raw, out, rounds, duration, hertz_n = sys.argv[1:6]
rows = list(csv.DictReader(open(raw), delimiter="\t"))
data = {}
for r in rows:
    data.setdefault(r["tag"], {})[int(r["round"])] = r
rnds = sorted({int(r["round"]) for r in rows})


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def val(tag, rnd, field):
    r = data.get(tag, {}).get(rnd)
    return num(r[field]) if r else None


def per_cpu(tag, rnd):
    n, c = val(tag, rnd, "requests"), val(tag, rnd, "cpu_s")
    return n / c if n and c else None


def server_us(tag, rnd):
    n, c = val(tag, rnd, "requests"), val(tag, rnd, "server_cpu_s")
    return c * 1e6 / n if n and c else None


def div(a, b):
    return a / b if a is not None and b else None


def stat(vals, fmt):
    ok = [v for v in vals if v is not None]
    if not ok:
        return f"FAIL | | | 0/{len(vals)}"
    return f"{fmt(statistics.median(ok))} | {fmt(min(ok))} | {fmt(max(ok))} | {len(ok)}/{len(vals)}"


big = lambda v: f"{v:,.0f}"
ratio = lambda v: f"{v:.3f}x"
ms = lambda v: f"{v / 1000:.2f} ms"

L = ["# HTTP benchmark: wirebench vs wrk (generator) and nginx (server)", ""]
L.append(f"- date: {time.strftime('%Y-%m-%d %H:%M:%S %z')}; host {platform.node()}, kernel {platform.release()}, {os.cpu_count()} CPUs")
L.append(f"- {rounds} interleaved rounds, {duration} s per generator run; server on CPU 0, generator on CPU 1")
L.append("- requests per CPU-s = requests completed / (user+sys CPU of the generator process, start to exit)")
L.append("- ratios are computed per round, then median [min-max]")
L.append("")
L.append("| what | median | min | max | rounds |")
L.append("|---|---:|---:|---:|---:|")
for variant in ("log", "nolog"):
    for c in (50, 200):
        w, b = f"nginx-{variant}_wrk_c{c}", f"nginx-{variant}_wb_c{c}"
        L.append(f"| nginx {variant}, c={c}: wrk req/s | " + stat([val(w, r, "req_per_s") for r in rnds], big) + " |")
        L.append(f"| nginx {variant}, c={c}: wirebench req/s | " + stat([val(b, r, "req_per_s") for r in rnds], big) + " |")
        L.append(f"| nginx {variant}, c={c}: **req/s wirebench / wrk** | " + stat([div(val(b, r, "req_per_s"), val(w, r, "req_per_s")) for r in rnds], ratio) + " |")
        L.append(f"| nginx {variant}, c={c}: wrk requests per CPU-s | " + stat([per_cpu(w, r) for r in rnds], big) + " |")
        L.append(f"| nginx {variant}, c={c}: wirebench requests per CPU-s | " + stat([per_cpu(b, r) for r in rnds], big) + " |")
        L.append(f"| nginx {variant}, c={c}: **per CPU-s wirebench / wrk** | " + stat([div(per_cpu(b, r), per_cpu(w, r)) for r in rnds], ratio) + " |")
        L.append(f"| nginx {variant}, c={c}: p99 wrk | " + stat([val(w, r, "p99_us") for r in rnds], ms) + " |")
        L.append(f"| nginx {variant}, c={c}: p99 wirebench | " + stat([val(b, r, "p99_us") for r in rnds], ms) + " |")
L.append("| serve http --threads 1, wrk -t1 -c50: req/s | " + stat([val("serve_wrk_c50", r, "req_per_s") for r in rnds], big) + " |")
L.append("| serve http --threads 1 under wrk -t1 -c50: server CPU-us per request | " + stat([server_us("serve_wrk_c50", r) for r in rnds], lambda v: f"{v:.2f}") + " |")
for variant in ("log", "nolog"):
    L.append(f"| nginx {variant} under wrk -t1 -c50: server CPU-us per request | " + stat([server_us(f"nginx-{variant}_wrk_c50", r) for r in rnds], lambda v: f"{v:.2f}") + " |")
    L.append(f"| **server CPU per request, nginx {variant} / serve http** | " + stat([div(server_us(f"nginx-{variant}_wrk_c50", r), server_us("serve_wrk_c50", r)) for r in rnds], ratio) + " |")
for variant in ("log", "nolog"):
    L.append(f"| **serve http / nginx {variant}** (both under wrk -t1 -c50) | " + stat([div(val("serve_wrk_c50", r, "req_per_s"), val(f"nginx-{variant}_wrk_c50", r, "req_per_s")) for r in rnds], ratio) + " |")
L.append("")
L.append(f"## hertz scenario: POST echo, 1 KiB test-header, 100 connections, n={int(hertz_n):,} per point, --expect-echo")
L.append("")
L.append("| body | TPS median [range] | TP99 median [range] | TP999 median [range] |")
L.append("|---|---|---|---|")
for b in ("1k", "4k", "16k", "64k"):
    t = f"hertz_{b}"
    def cell(field, fmt):
        vals = [val(t, r, field) for r in rnds]
        ok = [v for v in vals if v is not None]
        if not ok:
            return "FAIL"
        return f"{fmt(statistics.median(ok))} [{fmt(min(ok))}-{fmt(max(ok))}]"
    L.append(f"| {b} | {cell('req_per_s', big)} | {cell('p99_us', ms)} | {cell('p999_us', ms)} |")
text = "\n".join(L) + "\n"
open(out, "w").write(text)
print(text, end="")
