# Sourced by the echo A/B scripts (benchsuite/echo/ab_clients.sh, ab_servers.sh,
# client_syscalls.sh): the C echo pair built once into a temporary directory, and one
# server at a time, started by the caller into $PID, waited for and stopped by PID.
# Needs SCRIPT_DIR (benchsuite/echo). Sets BUILD; removes it and stops $PID on exit.

BUILD=$(mktemp -d "${TMPDIR:-/tmp}/wirebench-echo.XXXXXX")
PID=""
c_echo_cleanup() {
    [[ -n "$PID" ]] && kill -TERM "$PID" 2>/dev/null && wait "$PID" 2>/dev/null || true
    rm -rf "$BUILD"
}
trap c_echo_cleanup EXIT
gcc -O2 -o "$BUILD/c_echo_server" "$SCRIPT_DIR/c_echo_server.c"
gcc -O2 -o "$BUILD/c_echo_client" "$SCRIPT_DIR/c_echo_client.c"

# Waits (at most ~5 s) until something accepts on 127.0.0.1:$1.
wait_port() {
    for _ in $(seq 50); do
        timeout 1 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null && return 0
        sleep 0.1
    done
}

# Stops the server this script started ($PID), and forgets it.
stop_server() {
    kill -TERM "$PID" 2>/dev/null || true
    wait "$PID" 2>/dev/null || true
    PID=""
}
