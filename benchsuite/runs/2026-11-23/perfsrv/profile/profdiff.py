# profdiff.py A.txt NA B.txt NB [label_a label_b]: ns per request per symbol from
# `perf report --no-children --sort sym -F overhead,sample,sym` of two cpu-clock
# recordings at 4999 Hz (one sample ~ 200 us), divided by the requests each served.
import sys
def load(f, req):
    d = {}
    for l in open(f):
        p = l.split()
        if len(p) < 4:
            continue
        try:
            n = int(p[1])
        except ValueError:
            continue
        sym = ' '.join(p[2:])
        d[sym] = d.get(sym, 0) + n
    return {k: v * 1e9 / 4999 / req for k, v in d.items()}
a = load(sys.argv[1], int(sys.argv[2])); b = load(sys.argv[3], int(sys.argv[4]))
la, lb = (sys.argv[5], sys.argv[6]) if len(sys.argv) > 6 else ("A", "B")
ka = sum(v for k, v in a.items() if k.startswith('[k]')); kb = sum(v for k, v in b.items() if k.startswith('[k]'))
print(f"total ns/request: {la} {sum(a.values()):.0f} (kernel {ka:.0f}), {lb} {sum(b.values()):.0f} (kernel {kb:.0f})")
rows = sorted(set(a) | set(b), key=lambda k: -(b.get(k, 0) - a.get(k, 0)))
print(f"{'symbol':50} {la:>8} {lb:>8} {'diff':>7}")
for k in rows[:25] + rows[-15:]:
    print(f"{k[:50]:50} {a.get(k, 0):8.0f} {b.get(k, 0):8.0f} {b.get(k, 0) - a.get(k, 0):+7.0f}")
