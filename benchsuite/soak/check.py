#!/usr/bin/env python3
"""The soak's checks (benchsuite/soak/soak.sh), from the raw output in OUT:

  check.py OUT      prints the checks, writes OUT/summary.json and OUT/summary.md,
                    exits 1 when one fails

For each server (http, redis, ws):
  load        the well-behaved load: exit 0, or 1 for a rate it could not keep on a
              shared machine (said, not failed); 0 errors, 0 failed connections, nothing
              over its memory budget, its accounting holds (requests still in flight at
              its end, replies later than its drain, are said)
  hostile     the hostile mix: no anomaly (a refused connect, a wrong answer, a pong
              missing), every activity ended
  counts      the server's own counters (its closing lines) equal what the load's result
              and the hostile mix's summary account for, exactly (requests the load still
              had in flight at its end: within that many)
  rss         server and generator RSS, every sample from DURATION/6 to the load's end
              within RSS_FLAT_PCT of the first (meta.json), and under RSS_BOUND_MB if set
  descriptors the server's descriptors back to their baseline once every client is gone
"""

import csv
import json
import re
import sys

PROTOS = ("http", "redis", "ws")


def load_json(path):
    with open(path) as f:
        return json.load(f)


def numbers(text):
    return int(text.replace(",", ""))


def server_counters(serve_txt, proto):
    """The server's counters from its closing lines: the runtime's `final:` line and the
    protocol's own `final redis:` / `final ws:` line."""
    out = {}
    lines = serve_txt.splitlines()
    final = next(line for line in lines if "; final: accepts " in line)
    names = {"timeouts header": "header_timeouts", "idle": "idle_timeouts", "held full": "held_full"}
    for name, n in re.findall(r"([a-z][a-z ]*?) ([\d,]+)", final.split("; final: ", 1)[1]):
        out[names.get(name, name.replace(" ", "_"))] = numbers(n)
    own = next((line for line in lines if f"final {proto}: " in line), "")
    for n, name in re.findall(r"([\d,]+) ([a-zA-Z][a-zA-Z0-9 -]*)", own.split(f"final {proto}: ", 1)[-1]):
        out[name.strip().replace(" ", "_").replace("-", "_")] = numbers(n)
    return out


def expected_counts(proto, load, hostile):
    """Each server counter the soak accounts for: (what, the server's name, expected).
    Requests still in flight when the load ended (a reply later than its 2 s drain) may
    or may not have reached the server: their counts are a range, (least, most)."""
    t, w, h = load["totals"], load.get("warmup") or {}, hostile["server_counts"]
    answered = t["ok"] + w.get("ok", 0)
    asked = answered if t["in_flight"] == 0 else (answered, answered + t["in_flight"])
    rows = [
        ("accepts", "accepts", t["connections"] + t.get("connections_from_warmup", 0) + h["accepts"]),
        ("requests answered", "requests", plus(asked, h["requests"])),
        ("idle timeouts", "idle_timeouts", 0),
        ("too large", "too_large", 0),
    ]
    if proto in ("http", "ws"):
        rows.append(("header timeouts", "header_timeouts", h["header_timeouts"]))
    if proto == "redis":
        rows += [
            ("protocol errors", "protocol_errors", h["protocol_errors"]),
            ("error replies", "error_replies", h["error_replies"]),
            ("inline commands", "inline_commands", 0),
        ]
    if proto == "ws":
        own = load["ws"]
        rows += [
            ("upgrades", "upgrades", own["upgrades"] + h["upgrades"]),
            ("messages", "messages", plus(asked, h["messages"])),
            ("clean closes", "clean_closes", own["clean_closes"] + h["clean_closes"]),
            ("bad frames", "bad_frames", h["bad_frames"]),
            ("client pings answered", "client_pings_answered", h["pings_answered"]),
        ]
    return rows


def plus(n, m):
    return n + m if isinstance(n, int) else (n[0] + m, n[1] + m)


def agrees(got, want):
    return got == want if isinstance(want, int) else want[0] <= got <= want[1]


def words(n):
    return f"{n:,}" if isinstance(n, int) else f"{n[0]:,}-{n[1]:,}"


class Checks:
    def __init__(self):
        self.rows = []

    def add(self, what, ok, detail, **figures):
        self.rows.append({"check": what, "ok": bool(ok), "detail": detail, **figures})
        print(f"{'ok  ' if ok else 'FAIL'} {what}: {detail}")

    def note(self, what, detail, **figures):
        self.rows.append({"check": what, "ok": None, "detail": detail, **figures})
        print(f"note {what}: {detail}")


def check_load(c, proto, load, code):
    t, rate = load["totals"], load.get("rate") or {}
    clean = (
        t["errors"] == 0
        and t["connect_errors"] == 0
        and t["over_budget"] == 0
        and t["invariant_holds"]
        and code in (0, 1)
    )
    c.add(
        f"{proto} load: 0 errors",
        clean,
        f"exit {code}, sent {t['sent']:,}, ok {t['ok']:,}, errors {t['errors']}, "
        f"connect errors {t['connect_errors']}, in flight {t['in_flight']}, "
        f"invariant {'holds' if t['invariant_holds'] else 'VIOLATED'}",
        sent=t["sent"], ok_replies=t["ok"], errors=t["errors"], exit=code,
        errors_by_kind=load.get("errors"),
    )
    if rate:
        words = (
            f"asked {rate['asked_per_s']:,.0f}/s, achieved {rate['achieved_per_s']:,.0f}/s, "
            f"at most {rate['behind_s']:.3f} s behind"
        )
        if code == 1 or not rate.get("kept_up", True):
            words += f": {load['outcome'].get('reason') or 'fell short'}"
        c.note(f"{proto} load rate", words, asked_per_s=rate["asked_per_s"],
               achieved_per_s=rate["achieved_per_s"], kept_up=rate.get("kept_up"))


def check_hostile(c, proto, hostile, code):
    bad = {
        name: a["anomalies"] for name, a in hostile["activities"].items() if a["anomalies"]
    }
    late = hostile["still_running_at_the_end"]
    t = hostile["totals"]
    c.add(
        f"{proto} hostile mix: no anomaly",
        code == 0 and hostile["anomalies"] == 0 and not late,
        f"exit {code}, {t.get('connects', 0):,} connects "
        f"({hostile['drops_per_minute_achieved']:,.0f} drops/min), {t.get('refused', 0):,} garbage "
        f"refused, {t.get('resets', 0):,} resets, {t.get('pings', 0):,} pings flooded; "
        f"anomalies {hostile['anomalies']}{f' {bad}' if bad else ''}"
        f"{f', still running: {late}' if late else ''}",
        totals=t,
    )
    kinds = sorted({k.split("_")[-1] for k in t if k.startswith("trickle_sessions_")})
    words = []
    for k in kinds:
        words.append(
            f"{k}: {t.get(f'trickle_sessions_{k}', 0)} sessions, "
            f"{t.get(f'trickle_closed_{k}', 0)} closed by the server "
            f"(longest {t.get(f'trickle_closed_{k}_longest_s', 0)} s), "
            f"{t.get(f'trickle_held_{k}', 0)} still open after the grace "
            f"(longest {t.get(f'trickle_held_{k}_longest_s', 0)} s)"
        )
    c.note(f"{proto} tricklers", "; ".join(words))


def check_counts(c, proto, load, hostile, serve_txt):
    server = server_counters(serve_txt, proto)
    rows = expected_counts(proto, load, hostile)
    off = [(what, server.get(key, 0), want) for what, key, want in rows if not agrees(server.get(key, 0), want)]
    in_flight = load["totals"]["in_flight"]
    c.add(
        f"{proto} counts: the server's own == the load's + the hostile mix's",
        not off,
        ", ".join(f"{what} {server.get(key, 0):,}" for what, key, _ in rows)
        + (f" (the load ended with {in_flight} in flight: requests within a range)" if in_flight else "")
        + ("" if not off else "; DIFFER: " + ", ".join(f"{w} server {s:,} != {words(e)}" for w, s, e in off)),
        server={key: server.get(key, 0) for _, key, _ in rows},
        expected={key: want for _, key, want in rows},
        exact=in_flight == 0,
        closing_lines=server,
    )


def samples(out):
    rows = {}
    with open(f"{out}/samples.tsv") as f:
        for r in csv.DictReader(f, delimiter="\t"):
            if int(r["rss_bytes"]) > 0:  # 0: sampled as it exited (an older sampler)
                rows.setdefault(r["name"], []).append((float(r["t_s"]), int(r["rss_bytes"])))
    return rows


def check_rss(c, proto, rows, meta):
    """Server and generator RSS over the load's life: flat from DURATION/6 on."""
    load = rows.get(f"load-{proto}", [])
    end = load[-1][0] if load else 0
    start = meta["duration_s"] / 6
    pct, bound = meta["rss_flat_pct"], meta.get("rss_bound_mb")
    for who in (f"server-{proto}", f"load-{proto}"):
        life = [(t, b) for t, b in rows.get(who, []) if t <= end]
        window = [(t, b) for t, b in life if t >= start]
        if not window:
            c.add(f"{who} RSS", False, "no samples in the window")
            continue
        ref, last = window[0], window[-1]
        lo, hi = min(b for _, b in window), max(b for _, b in window)
        dev = max(hi - ref[1], ref[1] - lo) / ref[1] * 100
        peak = max(b for _, b in life)
        ok = (pct <= 0 or dev <= pct) and (not bound or peak <= bound * 2**20)
        c.add(
            f"{who} RSS",
            ok,
            f"{mib(ref[1])} at {ref[0]:.0f} s, {mib(last[1])} at {last[0]:.0f} s, window "
            f"{mib(lo)}-{mib(hi)} ({dev:.1f}% from the first"
            f"{f', limit {pct:g}%' if pct > 0 else ', not checked'}), peak {mib(peak)}"
            f"{f' (bound {bound:g} MiB)' if bound else ''}, {len(window)} samples",
            rss_at_window_start=ref[1], window_start_s=ref[0], rss_at_end=last[1], end_s=last[0],
            window_min=lo, window_max=hi, deviation_pct=round(dev, 2), peak=peak,
        )


def mib(b):
    return f"{b / 2**20:.1f} MiB"


def check_descriptors(c, out):
    with open(f"{out}/descriptors.tsv") as f:
        for r in csv.DictReader(f, delimiter="\t"):
            c.add(
                f"{r['server']} descriptors back to baseline",
                r["after"] == r["baseline"],
                f"baseline {r['baseline']}, after the clients {r['after']} "
                f"(waited {r['waited_s']} s)",
                baseline=int(r["baseline"]), after=int(r["after"]),
            )


def main(out):
    meta = load_json(f"{out}/meta.json")
    with open(f"{out}/exits.tsv") as f:
        exits = {r["name"]: int(r["exit"]) for r in csv.DictReader(f, delimiter="\t")}
    rows = samples(out)
    c = Checks()
    for p in PROTOS:
        try:
            load, hostile = load_json(f"{out}/load-{p}.json"), load_json(f"{out}/hostile-{p}.json")
            with open(f"{out}/serve-{p}.txt") as f:
                serve_txt = f.read()
            server_counters(serve_txt, p)
        except (OSError, ValueError, StopIteration) as e:
            c.add(f"{p} results", False, f"missing or unreadable ({type(e).__name__}: {e})")
            continue
        check_load(c, p, load, exits[f"load-{p}"])
        check_hostile(c, p, hostile, exits[f"hostile-{p}"])
        check_counts(c, p, load, hostile, serve_txt)
        check_rss(c, p, rows, meta)
    check_descriptors(c, out)
    failed = [r["check"] for r in c.rows if r["ok"] is False]
    with open(f"{out}/summary.json", "w") as f:
        json.dump({"meta": meta, "checks": c.rows, "failed": failed}, f, indent=1)
    write_markdown(f"{out}/summary.md", meta, c.rows, failed)
    print(f"soak: {len(failed)} of {sum(r['ok'] is not None for r in c.rows)} checks failed"
          + (f": {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


def write_markdown(path, meta, rows, failed):
    lines = [
        f"# Soak, {meta['date_utc']}, commit {meta['commit'][:12]}{' (dirty)' if meta['dirty'] else ''}",
        "",
        f"`{meta['command']}`: {meta['duration_s']} s, rates {meta['rates']}, "
        f"-c {meta['connections']} -t 1, binary {meta['binary']} ({meta['version']}), "
        f"kernel {meta['kernel']}",
        "",
        "| check | result | detail |",
        "|---|---|---|",
    ]
    for r in rows:
        result = {True: "ok", False: "**FAIL**", None: "note"}[r["ok"]]
        lines.append(f"| {r['check']} | {result} | {r['detail']} |")
    lines += ["", f"{len(failed)} checks failed." if failed else "Every check passed."]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
