# Pools the per-round ratios of echo/ab_clients.sh holds (msgs/s), order swapped between them:
#   python3 pool_echo_clients.py echo-clients echo-clients-swapped
import csv, glob, statistics, sys
out = {}
for d in sys.argv[1:]:
    rows = list(csv.DictReader(open(glob.glob(d + "/*.tsv")[0]), delimiter="\t"))
    per = {(r["round"], r["point"], r["client"]): float(r["msgs_per_s"]) for r in rows}
    for (rd, pt, cl) in list(per):
        if cl == "C":
            continue
        out.setdefault((pt, cl + "/C"), []).append(per[(rd, pt, cl)] / per[(rd, pt, "C")])
        if cl == "merged" and (rd, pt, "main") in per:
            out.setdefault((pt, "merged/main"), []).append(per[(rd, pt, cl)] / per[(rd, pt, "main")])
for (pt, k), v in sorted(out.items()):
    print(f"{pt} {k}: {statistics.median(v):.3f}x [{min(v):.3f}-{max(v):.3f}] rounds={len(v)} above1={sum(x > 1 for x in v)}")
