# Pools the per-round ratios of several holds of http/ab_servers.sh (http) or
# echo/ab_servers.sh (echo): every server against `main` and against the peer
# (nginx / C), same round, median [range] and the count of rounds.
# Usage: python3 pool.py http DIR...   |   python3 pool.py echo DIR...
import csv, statistics, sys
kind, dirs = sys.argv[1], sys.argv[2:]
res = {}
for d in dirs:
    rows = list(csv.DictReader(open(d + "/raw.tsv"), delimiter="\t"))
    per = {}
    for r in rows:
        if kind == "http":
            n, c = float(r["requests"]), float(r["server_cpu_s"])
            key = (r["round"], "", r["server"])
        else:
            if r["msgs_per_s"] in ("", "FAIL"):
                continue
            n, c = float(r["messages"]), float(r["server_cpu_s"])
            key = (r["round"], r["point"], r["server"])
        per[key] = n / c if n and c else None
    peer = "nginx" if kind == "http" else "C"
    for (rd, pt, s), v in per.items():
        if not v or s in (peer,):
            continue
        for base in ("main", peer):
            b = per.get((rd, pt, base))
            if b and s != base:
                res.setdefault((pt, s, base), []).append(v / b)
for (pt, s, base), v in sorted(res.items()):
    print(f"{pt or 'http'}\t{s} / {base}\t{statistics.median(v):.3f}x [{min(v):.3f}-{max(v):.3f}]\trounds={len(v)}\tabove1={sum(x > 1 for x in v)}")
