import csv,statistics,sys
ur=[];un=[];en=[]
for d in sys.argv[1:]:
    rows=list(csv.DictReader(open(d+"/raw.tsv"),delimiter="\t"))
    per={}
    for r in rows:
        n,c=float(r["requests"]),float(r["server_cpu_s"])
        per[(r["round"],r["server"])]=n/c if n and c else None
    for rd in sorted({r["round"] for r in rows},key=int):
        u,e,g=per.get((rd,"uring")),per.get((rd,"epoll")),per.get((rd,"nginx"))
        if u and e: ur.append(u/e)
        if u and g: un.append(u/g)
        if e and g: en.append(e/g)
f=lambda v:f"{statistics.median(v):.3f}x [{min(v):.3f}-{max(v):.3f}] n={len(v)} above1={sum(x>1 for x in v)}"
print("uring/epoll",f(ur)); print("uring/nginx",f(un)); print("epoll/nginx",f(en))
