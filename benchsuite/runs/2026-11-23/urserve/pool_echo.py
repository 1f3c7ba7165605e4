import csv,statistics,sys
res={}
for d in sys.argv[1:]:
    rows=list(csv.DictReader(open(d+"/raw.tsv"),delimiter="\t"))
    per={}
    for r in rows:
        m,c=float(r["messages"]),float(r["server_cpu_s"])
        per[(d,r["round"],r["point"],r["server"])]=m/c if m and c else None
    for (dd,rd,pt,s),v in per.items():
        if s!="uring": continue
        e=per.get((dd,rd,pt,"epoll")); C=per.get((dd,rd,pt,"C"))
        res.setdefault((pt,"uring/epoll"),[]).append(v/e)
        res.setdefault((pt,"uring/C"),[]).append(v/C)
        res.setdefault((pt,"epoll/C"),[]).append(e/C)
for k,v in sorted(res.items()):
    print(k, f"{statistics.median(v):.3f}x [{min(v):.3f}-{max(v):.3f}] n={len(v)}")
