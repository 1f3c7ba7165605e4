#!/usr/bin/env bash
# connect::separate_multi_process_server_returns_to_its_descriptor_baseline, N runs of
# each test binary interleaved, under a CPU hog (a busy loop pinned to each CPU, started
# here and stopped by PID at the end); counts the passes of each.
# usage: hog.sh N OUTDIR NAME=TESTBIN...
set -u
n=$1; out=$2; shift 2
mkdir -p "$out"
hogs=()
for cpu in 0 1; do
    taskset -c $cpu bash -c 'while :; do :; done' &
    hogs+=($!)
done
trap 'kill "${hogs[@]}" 2>/dev/null' EXIT
declare -A pass
for i in $(seq 1 "$n"); do
    for kv in "$@"; do
        name=${kv%%=*}; bin=${kv#*=}
        log="$out/$name-run$i.log"
        if "$bin" --exact connect::separate_multi_process_server_returns_to_its_descriptor_baseline >"$log" 2>&1; then
            pass[$name]=$(( ${pass[$name]:-0} + 1 )); rm -f "$log"
        else
            echo "$name run $i failed: $(grep -m1 -E 'final line|server fds|panicked' -A1 "$log" | tail -1 | cut -c1-160)"
        fi
    done
done
for kv in "$@"; do name=${kv%%=*}; echo "$name: passed ${pass[$name]:-0} of $n"; done
