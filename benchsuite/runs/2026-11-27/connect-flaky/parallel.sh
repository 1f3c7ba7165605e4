#!/usr/bin/env bash
# The baseline test, K copies at once, N rounds, under a CPU hog (a busy loop pinned
# to each CPU, stopped by PID at the end); counts passes.
# usage: parallel.sh TESTBIN N K OUTDIR
set -u
bin=$1; n=$2; k=$3; out=$4
mkdir -p "$out"
hogs=()
for cpu in 0 1; do
    taskset -c $cpu bash -c 'while :; do :; done' &
    hogs+=($!)
done
trap 'kill ${hogs[@]} 2>/dev/null' EXIT
pass=0; total=0
for i in $(seq 1 $n); do
    pids=()
    for j in $(seq 1 $k); do
        "$bin" --exact connect::separate_multi_process_server_returns_to_its_descriptor_baseline >"$out/r$i-$j.log" 2>&1 &
        pids+=($!)
    done
    for j in $(seq 1 $k); do
        total=$((total+1))
        if wait ${pids[$((j-1))]}; then pass=$((pass+1)); rm -f "$out/r$i-$j.log"; else echo "round $i copy $j failed"; fi
    done
done
echo "passed $pass of $total"
