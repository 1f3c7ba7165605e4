import re,sys
def load(f,req):
    d={};tot=0;k=0;u=0
    for l in open(f):
        m=re.match(r'\s+([\d.]+)%\s+(\d+)\s+\[(.)\]\s+(.*)',l)
        if m:
            ns=int(m.group(2))*100000/req; d[m.group(4).strip()]=ns; tot+=ns
            if m.group(3)=='k': k+=ns
            else: u+=ns
    return d,tot,k,u
def reqs(f): return int(re.search(r'(\d+) requests in',open(f).read()).group(1))
D=sys.argv[1]; a,b=sys.argv[2],sys.argv[3]
A,ta,ka,ua=load(f"{D}/{a}.syms.txt",reqs(f"{D}/{a}.wrk.txt"))
B,tb,kb,ub=load(f"{D}/{b}.syms.txt",reqs(f"{D}/{b}.wrk.txt"))
print(f"{a}: total {ta:.0f} ns/req kernel {ka:.0f} user {ua:.0f};  {b}: total {tb:.0f} kernel {kb:.0f} user {ub:.0f}")
keys=sorted(set(A)|set(B),key=lambda k:-(A.get(k,0)-B.get(k,0)))
n=int(sys.argv[4]) if len(sys.argv)>4 else 25
for k in keys[:n]: print(f"{A.get(k,0):6.0f} {B.get(k,0):6.0f} {A.get(k,0)-B.get(k,0):+5.0f} {k[:80]}")
print("...")
for k in keys[-n:]: print(f"{A.get(k,0):6.0f} {B.get(k,0):6.0f} {A.get(k,0)-B.get(k,0):+5.0f} {k[:80]}")
