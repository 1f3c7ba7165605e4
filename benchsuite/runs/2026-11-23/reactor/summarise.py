import csv, statistics, sys, glob, os
base = __import__("os").path.dirname(__import__("os").path.abspath(__file__))
def rows(p):
    try: return list(csv.DictReader(open(p), delimiter="\t"))
    except OSError: return []
def f(v):
    try: return float(v)
    except: return None
res = {}
for batch in ("echo", "echo-more"):
    for d in sorted(glob.glob(f"{base}/{batch}/*-r*/")):
        name = os.path.basename(d.rstrip("/"))
        build, r = name.rsplit("-r", 1)
        m = {(x["point"], x["what"]): x for x in rows(d + "raw.tsv")}
        s = {(x["point"], x["what"]): x for x in rows(d + "server_cpu.tsv")}
        for point in ("10x1", "100x16"):
            a, b, c = m.get((point, "a")), m.get((point, "b")), m.get((point, "c"))
            if not (a and b and c): continue
            mps = lambda x: f(x["msgs_per_s"])
            pc = lambda x: mps(x) / (f(x["cpu_s"]) / f(x["wall_s"]))
            ps = lambda w: mps(m[(point, w)]) / (f(s[(point, w)]["server_cpu_s"]) / f(s[(point, w)]["wall_s"]))
            vals = {"C pair msgs/s": mps(a), "client b/a msgs/s": mps(b)/mps(a), "client b/a per client CPU-s": pc(b)/pc(a),
                    "server c/a msgs/s": mps(c)/mps(a), "server c/a per server CPU-s": ps("c")/ps("a")}
            for k, v in vals.items():
                res.setdefault((build, point, k), []).append((f"{batch}/{name}", v))
for point in ("10x1", "100x16"):
    for k in ("C pair msgs/s", "client b/a msgs/s", "client b/a per client CPU-s", "server c/a msgs/s", "server c/a per server CPU-s"):
        cells = []
        for build in ("before", "after"):
            q = [v for _, v in res.get((build, point, k), [])]
            fmt = (lambda x: f"{x:,.0f}") if k.startswith("C pair") else (lambda x: f"{x:.3f}x")
            cells.append(f"{fmt(statistics.median(q))} [{fmt(min(q))}-{fmt(max(q))}] n={len(q)}" if q else "n/a")
        print(f"| {point} | {k} | " + " | ".join(cells) + " |")
if "-v" in sys.argv:
    for key, l in sorted(res.items()):
        print(key, [f"{n}:{v:.3f}" for n, v in l])
