# Pools the per-round ratios of http/ab_servers.sh holds (requests per server CPU-s):
#   python3 pool_http.py http-servers-1 http-servers-2
import csv, statistics, sys
pairs = {"merged/nginx": [], "main/nginx": [], "merged/main": []}
for d in sys.argv[1:]:
    rows = list(csv.DictReader(open(d + "/raw.tsv"), delimiter="\t"))
    per = {}
    for r in rows:
        n, c = float(r["requests"]), float(r["server_cpu_s"])
        per[(r["round"], r["server"])] = n / c if n and c else None
    for rd in sorted({r["round"] for r in rows}, key=int):
        for k in pairs:
            a, b = k.split("/")
            x, y = per.get((rd, a)), per.get((rd, b))
            if x and y:
                pairs[k].append(x / y)
for k, v in pairs.items():
    print(f"{k}: {statistics.median(v):.3f}x [{min(v):.3f}-{max(v):.3f}] rounds={len(v)} above1={sum(x > 1 for x in v)}")
