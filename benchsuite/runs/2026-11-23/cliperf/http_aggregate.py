"""wirebench http / wrk against nginx, per round, from the http-<label>-r<N>/raw.tsv runs
of benchsuite/http/run.sh (one binary per run, labels interleaved): median [range] of
req/s and of requests per generator CPU-second, each against the wrk of the same run."""
import csv, glob, os, statistics, sys
here = os.path.dirname(os.path.abspath(__file__))
runs = {}
for d in sorted(glob.glob(os.path.join(here, "http-*-r*"))):
    label = os.path.basename(d).split("-")[1]
    rows = {r["tag"]: r for r in csv.DictReader(open(os.path.join(d, "raw.tsv")), delimiter="\t")}
    runs.setdefault(label, []).append(rows)
def num(r, k):
    try:
        return float(r[k].replace("FAIL:", ""))
    except (KeyError, ValueError):
        return None
def cell(v):
    v = [x for x in v if x]
    return f"{statistics.median(v):.3f}x [{min(v):.3f}-{max(v):.3f}]" if v else "n/a"
print("| binary | nginx | c | wb/wrk req/s | wb/wrk requests per generator CPU-s | rounds |")
print("|---|---|---|---|---|---|")
for label, rounds in runs.items():
    for variant in ("log", "nolog"):
        for c in (50, 200):
            rps, per_cpu = [], []
            for rows in rounds:
                wb, wrk = rows.get(f"nginx-{variant}_wb_c{c}"), rows.get(f"nginx-{variant}_wrk_c{c}")
                if not wb or not wrk:
                    continue
                a, b = num(wb, "req_per_s"), num(wrk, "req_per_s")
                rps.append(a / b if a and b else None)
                na, ca, nb, cb = num(wb, "requests"), num(wb, "cpu_s"), num(wrk, "requests"), num(wrk, "cpu_s")
                per_cpu.append((na / ca) / (nb / cb) if na and ca and nb and cb else None)
            print(f"| {label} | {variant} | {c} | {cell(rps)} | {cell(per_cpu)} | {len(rps)} |")
