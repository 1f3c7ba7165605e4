# The setup every benchsuite load script that starts servers shares, sourced through the
# peer's library (benchsuite/lib/nginx.sh, c_echo.sh), which passes on NAME:
#   source "$(dirname "${BASH_SOURCE[0]}")/../lib/nginx.sh" NAME
# NAME: the default results directory (benchsuite/runs/<date>/NAME) and the name of the
# temporary one. Sets SCRIPT_DIR (the running script's directory), REPO, OUT (absolute,
# created), WORK (a temporary directory) and PID (the one server the script has running
# at a time); one EXIT trap stops that server by its PID and removes WORK.

# The running script is the bottom of the source stack (this file is sourced by a library).
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[${#BASH_SOURCE[@]} - 1]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/../.." && pwd)
OUT=${OUT:-$REPO/benchsuite/runs/$(date +%F)/$1}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/wirebench-$1.XXXXXX")
PID=""

# Stops the server this script started ($PID) with SIGNAL (default TERM), waits for it,
# and forgets it.
stop_server() { # [SIGNAL]
    [[ -n "$PID" ]] || return 0
    kill -"${1:-TERM}" "$PID" 2>/dev/null || true
    wait "$PID" 2>/dev/null || true
    PID=""
}
trap 'stop_server; rm -rf "$WORK"' EXIT

# Waits (at most ~5 s) until something accepts on 127.0.0.1:PORT; fails if nothing does,
# or as soon as the server it was started for (PID, default $PID) has exited (one that
# could not bind its port, say).
wait_port() { # PORT [PID]
    local pid=${2:-$PID}
    for _ in $(seq 50); do
        [[ -z $pid ]] || kill -0 "$pid" 2>/dev/null || return 1
        timeout 1 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

# knobs NAME=DEFAULT...: the script's knobs, each kept if the environment sets it
# (non-empty), else set to DEFAULT (as NAME=${NAME:-DEFAULT} would).
knobs() {
    local kv name
    for kv; do
        name=${kv%%=*}
        [[ -n ${!name:-} ]] || printf -v "$name" '%s' "${kv#*=}"
    done
}

# Exits 2 with one line if a tool the script runs is not installed.
need_tools() { # TOOL...
    local tool
    for tool; do
        command -v "$tool" >/dev/null 2>&1 || { echo "!! $tool is missing" >&2; exit 2; }
    done
}
