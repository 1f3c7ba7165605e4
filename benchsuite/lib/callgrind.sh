# Sourced by the callgrind scripts (echo/client_callgrind.sh, http/client_callgrind.sh)
# after their preamble. A run under `valgrind --tool=callgrind --separate-threads=yes`
# leaves one file per thread; the load thread's is the one with the most instructions.

# busiest_thread PREFIX ANNOTATE_OUT: prints the instruction count of the busiest
# PREFIX.cg* file and writes its top functions (callgrind_annotate) to ANNOTATE_OUT.
busiest_thread() {
    local prefix=$1 annotate=$2 best="" most=0 f n
    for f in "$prefix".cg*; do
        n=$(sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$f")
        if ((n > most)); then most=$n best=$f; fi
    done
    callgrind_annotate --inclusive=no "$best" 2>/dev/null | sed -n 1,60p >"$annotate"
    echo "$most"
}
