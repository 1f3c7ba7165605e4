#!/usr/bin/env python3
"""Messages per server CPU-second from a ws-servers suite's points: per server and
point the median [range] over rounds, and serve ws / Go computed round by round."""
import glob, json, statistics, sys
from collections import defaultdict

out = sys.argv[1]
per = defaultdict(dict)  # (conns, pipeline) -> {(server, round): (msgs/s, msgs per cpu-s)}
for f in glob.glob(f"{out}/points/*.json"):
    j = json.load(open(f))
    s = j["suite"]
    cpu = s["server_cost"]["cpu_s"]
    key = (s["point"]["connections"], s["point"]["pipeline"])
    per[key][(s["server"], s["round"])] = (
        j["throughput"]["msgs_per_s"], j["totals"]["ok"] / cpu if cpu else float("nan"),
        j["totals"]["errors"])

def mr(v):
    return f"{statistics.median(v):,.0f} [{min(v):,.0f}-{max(v):,.0f}]"

def rr(v):
    return f"{statistics.median(v):.2f}x [{min(v):.2f}-{max(v):.2f}]"

print("| connections | pipeline | serve ws msgs/s | Go msgs/s | serve ws msgs per server CPU-s | Go msgs per server CPU-s | ratio (CPU-s) | ratio (msgs/s) | errors |")
print("|---|---|---|---|---|---|---|---|---|")
for key in sorted(per):
    d = per[key]
    rounds = sorted({r for (_, r) in d})
    w = [d[("wirebench-serve-ws", r)] for r in rounds if ("wirebench-serve-ws", r) in d]
    g = [d[("go-gorilla-echo", r)] for r in rounds if ("go-gorilla-echo", r) in d]
    ratio_cpu = [d[("wirebench-serve-ws", r)][1] / d[("go-gorilla-echo", r)][1] for r in rounds
                 if ("wirebench-serve-ws", r) in d and ("go-gorilla-echo", r) in d]
    ratio_tp = [d[("wirebench-serve-ws", r)][0] / d[("go-gorilla-echo", r)][0] for r in rounds
                if ("wirebench-serve-ws", r) in d and ("go-gorilla-echo", r) in d]
    errors = sum(x[2] for x in w + g)
    print(f"| {key[0]} | {key[1]} | {mr([x[0] for x in w])} | {mr([x[0] for x in g])} | "
          f"{mr([x[1] for x in w])} | {mr([x[1] for x in g])} | {rr(ratio_cpu)} | {rr(ratio_tp)} | {errors} |")
