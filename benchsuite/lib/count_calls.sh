# Sourced by the generator system-call scripts (benchsuite/echo/client_syscalls.sh,
# benchsuite/http/client_syscalls.sh): runs one generator under `perf stat` (system call
# tracepoints, in-kernel counters: no per-call tracing cost as with strace) and `perf
# record` of its epoll waits' return values only, and writes one TSV row of counts.
#
# count_calls OUT TAG UNITS_CMD -- COMMAND...
#   OUT: a directory (OUT/TAG.perf, OUT/TAG.waits are kept); UNITS_CMD: a shell command
#   run afterwards that prints how many messages or requests the run made.
# Prints: tag units task_clock_ms user_us sys_us ctx_switches reads recvs recv_eagain read_eagain writes
#         sends epoll_waits epoll_ctls events_per_wait  (all totals, not per unit)
COUNT_EVENTS=(
    task-clock user_time system_time context-switches
    syscalls:sys_enter_read syscalls:sys_enter_recvfrom syscalls:sys_enter_write
    syscalls:sys_enter_sendto syscalls:sys_enter_writev
    syscalls:sys_enter_epoll_wait syscalls:sys_enter_epoll_pwait syscalls:sys_enter_epoll_pwait2
    syscalls:sys_enter_epoll_ctl
)
count_calls() {
    local out=$1 tag=$2 units_cmd=$3
    shift 4 # OUT TAG UNITS_CMD --
    local ev=() e
    for e in "${COUNT_EVENTS[@]}"; do ev+=(-e "$e"); done
    # EAGAIN (-11) returns of the reads, counted apart through tracepoint filters.
    ev+=(-e syscalls:sys_exit_recvfrom --filter 'ret == -11' -e syscalls:sys_exit_read --filter 'ret == -11')
    perf record -q -o "$out/$tag.waits" \
        -e syscalls:sys_exit_epoll_wait -e syscalls:sys_exit_epoll_pwait -e syscalls:sys_exit_epoll_pwait2 -- \
        perf stat -x, -o "$out/$tag.perf" "${ev[@]}" -- "$@" >"$out/$tag.stdout" 2>"$out/$tag.stderr" || true
    local units
    units=$(bash -c "$units_cmd")
    local events
    events=$(perf script -i "$out/$tag.waits" -F trace 2>/dev/null | python3 -c '
import sys
n = s = 0
for line in sys.stdin:
    v = int(line.split()[-1], 0)  # "0x1f" or "-4"
    n += 1
    s += max(v, 0)
print(f"{s / n:.2f}" if n else "0")')
    rm -f "$out/$tag.waits"
    v() { awk -F, -v e="$1" '$3 == e {printf "%d\n", $1; f=1} END {if (!f) print 0}' "$out/$tag.perf"; }
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$tag" "$units" "$(awk -F, '$3 == "task-clock" {print $1}' "$out/$tag.perf")" \
        "$(($(v user_time) / 1000))" "$(($(v system_time) / 1000))" \
        "$(v context-switches)" "$(v syscalls:sys_enter_read)" "$(v syscalls:sys_enter_recvfrom)" \
        "$(v syscalls:sys_exit_recvfrom)" "$(v syscalls:sys_exit_read)" \
        "$(($(v syscalls:sys_enter_write) + $(v syscalls:sys_enter_writev)))" "$(v syscalls:sys_enter_sendto)" \
        "$(($(v syscalls:sys_enter_epoll_wait) + $(v syscalls:sys_enter_epoll_pwait) + $(v syscalls:sys_enter_epoll_pwait2)))" \
        "$(v syscalls:sys_enter_epoll_ctl)" "$events"
}

# Per-unit table of count_calls rows: TSV in, Markdown out.
per_unit_table() { # TSV
    python3 - "$1" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
cols = ["task_clock_ms", "user_us", "sys_us", "ctx_switches", "reads", "recvs", "recv_eagain", "read_eagain",
        "writes", "sends", "epoll_waits", "epoll_ctls"]
print("| run | units | CPU us/unit | " + " | ".join(c + "/unit" for c in cols[1:]) + " | events/wait |")
print("|---" * (len(cols) + 3) + "|")
for r in rows:
    u = float(r["units"] or 0) or float("nan")
    cells = [f"{float(r['task_clock_ms']) * 1000 / u:.3f}"] + [f"{float(r[c]) / u:.4f}" for c in cols[1:]]
    print(f"| {r['tag']} | {r['units']} | " + " | ".join(cells) + f" | {r['events_per_wait']} |")
PY
}
COUNT_HEADER=$'tag\tunits\ttask_clock_ms\tuser_us\tsys_us\tctx_switches\treads\trecvs\trecv_eagain\tread_eagain\twrites\tsends\tepoll_waits\tepoll_ctls\tevents_per_wait'
