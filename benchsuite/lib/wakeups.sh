# Sourced by the wake-up counting scripts (benchsuite/echo/peer_wakeups.sh,
# benchsuite/http/peer_wakeups.sh): how often each side of a load sleeps and is woken.
# A process that blocks in epoll_wait and is woken by its peer's send pays a voluntary
# context switch; the waker pays the wake-up (ttwu, and on this VM an IPI: the
# "Rescheduling interrupts" and "Function call interrupts" lines of /proc/interrupts).
#
# Counts, all totals over one load run:
#   server side: voluntary / involuntary context switches of every thread of the
#     server (/proc/PID/task/*/status, before and after) and its epoll waits (perf
#     stat attached to it: syscall tracepoints, in-kernel counters, no tracing cost);
#   client side: the same, through /usr/bin/time (rusage) and perf stat around it;
#   machine: RES + CAL interrupts (both CPUs) over the run.

WAKE_EVENTS=(-e syscalls:sys_enter_epoll_wait -e syscalls:sys_enter_epoll_pwait -e syscalls:sys_enter_epoll_pwait2)
WAKE_HEADER=$'tag\tunits\tsrv_vcsw\tsrv_ivcsw\tsrv_waits\tcli_vcsw\tcli_ivcsw\tcli_waits\tipis'

# Sum of one /proc status field over a process's threads.
proc_csw() { # PID FIELD
    cat /proc/"$1"/task/*/status 2>/dev/null | awk -v f="$2:" '$1 == f {s += $2} END {print s + 0}'
}
ipis() { awk '$1 == "RES:" || $1 == "CAL:" {s += $2 + $3} END {print s + 0}' /proc/interrupts; }
waits_of() { # PERF_CSV
    awk -F, '$3 ~ /epoll_/ {s += $1} END {print s + 0}' "$1"
}

# count_wakeups OUT TAG SERVER_PID UNITS_CMD -- CLIENT COMMAND...
#   Runs the client (its output in OUT/TAG.stdout), then prints one TSV row
#   (WAKE_HEADER). UNITS_CMD: a shell command printing the messages or requests made.
count_wakeups() {
    local out=$1 tag=$2 spid=$3 units_cmd=$4
    shift 5
    local v0 i0 irq0
    v0=$(proc_csw "$spid" voluntary_ctxt_switches)
    i0=$(proc_csw "$spid" nonvoluntary_ctxt_switches)
    perf stat -x, -o "$out/$tag.server.perf" "${WAKE_EVENTS[@]}" -p "$spid" 2>/dev/null &
    local perf_pid=$!
    sleep 0.2 # perf attaches before the load starts
    irq0=$(ipis)
    /usr/bin/time -f '%w %c' -o "$out/$tag.time" \
        perf stat -x, -o "$out/$tag.client.perf" "${WAKE_EVENTS[@]}" -- "$@" \
        >"$out/$tag.stdout" 2>"$out/$tag.stderr" || true
    local irq1 v1 i1
    irq1=$(ipis)
    v1=$(proc_csw "$spid" voluntary_ctxt_switches)
    i1=$(proc_csw "$spid" nonvoluntary_ctxt_switches)
    kill -INT "$perf_pid" 2>/dev/null || true
    wait "$perf_pid" 2>/dev/null || true
    local cv ci
    read -r cv ci <"$out/$tag.time"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$tag" "$(bash -c "$units_cmd")" \
        $((v1 - v0)) $((i1 - i0)) "$(waits_of "$out/$tag.server.perf")" \
        "$cv" "$ci" "$(waits_of "$out/$tag.client.perf")" $((irq1 - irq0))
}

# Per-unit table of count_wakeups rows: TSV in, Markdown out.
wakeups_table() { # TSV
    python3 - "$1" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
cols = ["srv_vcsw", "srv_ivcsw", "srv_waits", "cli_vcsw", "cli_ivcsw", "cli_waits", "ipis"]
print("| run | units | " + " | ".join(c + "/unit" for c in cols) + " |")
print("|---" * (len(cols) + 2) + "|")
for r in rows:
    u = float(r["units"] or 0) or float("nan")
    print(f"| {r['tag']} | {r['units']} | " + " | ".join(f"{float(r[c]) / u:.4f}" for c in cols) + " |")
PY
}
