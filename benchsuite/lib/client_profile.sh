# Sourced by benchsuite/http/client_profile.sh and benchsuite/echo/client_profile.sh
# (after their peer's library, nginx.sh or c_echo.sh): where a load generator's CPU
# goes, per request, beside the reference generator's, under the same server.
#
# profile_client OUT TAG SERVER_PID UNITS_CMD -- COMMAND...
#   Runs the generator twice against the server the caller started ($SERVER_PID,
#   pinned to CPU 0), on CPU 1: once under `perf stat` (task clock, context
#   switches, and the system calls a loop makes: epoll waits, reads, writes, epoll_ctl;
#   tracepoints, exact counts), the server watched the same way; once under
#   `perf record -e cpu-clock -g` (into $PERF_DATA, default the temporary WORK: the
#   recordings are megabytes; give PERF_DATA=dir to keep them). UNITS_CMD
#   prints the requests or messages the first run made. Prints one TSV row
#   (PROFILE_HEADER): per unit, the generator's CPU (us), context switches, epoll waits,
#   reads, writes, epoll_ctl calls, and the server's CPU (us) and context switches.
PERF_DATA=${PERF_DATA:-$WORK}
mkdir -p "$PERF_DATA"
PROFILE_EVENTS=task-clock,context-switches,syscalls:sys_enter_epoll_wait,syscalls:sys_enter_epoll_pwait,syscalls:sys_enter_epoll_pwait2,syscalls:sys_enter_read,syscalls:sys_enter_recvfrom,syscalls:sys_enter_write,syscalls:sys_enter_sendto,syscalls:sys_enter_writev,syscalls:sys_enter_epoll_ctl
PROFILE_HEADER=$'tag\tunits\tcpu_us\tcsw\twaits\treads\twrites\tepoll_ctl\tsrv_cpu_us\tsrv_csw'

# Sum of the counts of a `perf stat -x,` file whose event name matches REGEX.
# Starts OUT/profile.tsv with its header; profile_client's rows are appended to $TSV.
profile_table() { # OUT
    TSV=$1/profile.tsv
    printf '%s\n' "$PROFILE_HEADER" >"$TSV"
}

# The units a wirebench run answered, read from its --json FILE (a command for profile_client).
wirebench_units() { # FILE
    echo "python3 -c 'import json; print(json.load(open(\"$1\"))[\"totals\"][\"ok\"])'"
}

stat_sum() { # FILE REGEX
    awk -F, -v re="$2" '$3 ~ re && $1 ~ /^[0-9.]+$/ {s += $1} END {printf "%.0f", s}' "$1"
}

profile_client() {
    local out=$1 tag=$2 spid=$3 units_cmd=$4 units sperf
    shift 5
    perf stat -x, -o "$out/$tag.server.stat" -e "$PROFILE_EVENTS" -p "$spid" 2>/dev/null &
    sperf=$!
    sleep 0.2 # perf attaches before the load starts
    taskset -c 1 perf stat -x, -o "$out/$tag.stat" -e "$PROFILE_EVENTS" -- "$@" >"$out/$tag.stdout" 2>&1 || true
    kill -INT "$sperf"
    wait "$sperf" 2>/dev/null || true
    units=$(eval "$units_cmd")
    taskset -c 1 perf record -q -e cpu-clock -g -o "$PERF_DATA/$tag.data" -- "$@" >/dev/null 2>&1 || true
    python3 - "$tag" "${units:-0}" \
        "$(stat_sum "$out/$tag.stat" '^task-clock')" "$(stat_sum "$out/$tag.stat" '^context-switches')" \
        "$(stat_sum "$out/$tag.stat" 'epoll_(wait|pwait|pwait2)$')" "$(stat_sum "$out/$tag.stat" '(read|recvfrom)$')" \
        "$(stat_sum "$out/$tag.stat" '(write|sendto|writev)$')" "$(stat_sum "$out/$tag.stat" 'epoll_ctl$')" \
        "$(stat_sum "$out/$tag.server.stat" '^task-clock')" "$(stat_sum "$out/$tag.server.stat" '^context-switches')" <<'PY'
import sys
tag, units, cpu_ms, csw, waits, reads, writes, ctl, scpu_ms, scsw = sys.argv[1:]
u = float(units) or float("nan")
per = lambda x: f"{float(x) / u:.4f}"
print("\t".join([tag, units, f"{float(cpu_ms) * 1000 / u:.3f}", per(csw), per(waits), per(reads),
                 per(writes), per(ctl), f"{float(scpu_ms) * 1000 / u:.3f}", per(scsw)]))
PY
}

# The generators' profiles side by side: each TAG's top 60 symbols (self time) from
# its recording, in OUT/TAG.symbols.txt.
profile_symbols() { # OUT TAG...
    local out=$1 tag
    shift
    for tag; do
        perf report -i "$PERF_DATA/$tag.data" --no-children --sort sym --stdio -g none 2>/dev/null |
            grep -v '^#' | grep -v '^$' | head -60 >"$out/$tag.symbols.txt" || true
    done
}

# The end of a profile: each tag's top symbols, then the table, shown and kept as
# OUT/summary.txt.
profile_report() { # OUT TAG...
    profile_symbols "$@"
    column -t -s $'\t' "$TSV" | tee "$1/summary.txt"
}
