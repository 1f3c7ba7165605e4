import csv,sys,statistics
rows=list(csv.DictReader(open(sys.argv[1]),delimiter="\t"))
a,b=sys.argv[2],sys.argv[3]
by={(r["round"],r["tag"]):r for r in rows}
def pc(r): return float(r["requests"])/float(r["server_cpu_s"])
rs=[]
for rd in sorted({r["round"] for r in rows},key=int):
    if (rd,a) in by and (rd,b) in by:
        x=pc(by[(rd,a)])/pc(by[(rd,b)]); rs.append(x)
        print(rd, f"{pc(by[(rd,a)]):.0f} {pc(by[(rd,b)]):.0f} {x:.3f}", by[(rd,a)]["server_cpu_s"], by[(rd,b)]["server_cpu_s"])
print("median", statistics.median(rs), min(rs), max(rs))
