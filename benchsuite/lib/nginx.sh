# Sourced first by the scripts that load nginx (benchsuite/http/*.sh), with NAME (see
# preamble.sh, sourced from here: OUT, WORK, PID, stop_server, wait_port, knobs): one
# nginx at a time (one process, no master: benchsuite/http/nginx.conf.in), pinned to
# CPU 0, its PID in $PID (so preamble.sh's EXIT trap stops it too).

# shellcheck source=preamble.sh
source "$(dirname "${BASH_SOURCE[0]}")/preamble.sh" "$1"

NGINX=$(command -v nginx || echo /usr/sbin/nginx)

# start_nginx log|nolog: nginx on 127.0.0.1:$PORT, its configuration, pid file and logs
# in NGINX_DIR ($WORK/nginx-$PORT); "log" turns the access log on (NGINX_DIR/access.log,
# one line per request), "nolog" keeps it off as nginx.conf.in has it. Returns once the
# port accepts; exits the script if it never does.
start_nginx() { # log|nolog
    NGINX_DIR=$WORK/nginx-$PORT
    mkdir -p "$NGINX_DIR"
    sed -e "s#@PREFIX@#$NGINX_DIR#g" -e "s#@PORT@#$PORT#g" "$REPO/benchsuite/http/nginx.conf.in" >"$NGINX_DIR/nginx.conf"
    if [[ $1 == log ]]; then
        sed -i "s#access_log off;#access_log $NGINX_DIR/access.log;#" "$NGINX_DIR/nginx.conf"
    fi
    taskset -c 0 "$NGINX" -c "$NGINX_DIR/nginx.conf" -p "$NGINX_DIR/" 2>/dev/null &
    PID=$!
    wait_port "$PORT" || {
        echo "!! nginx did not start on port $PORT" >&2
        cat "$NGINX_DIR/error.log" >&2 2>/dev/null || true
        exit 1
    }
}

# Stops it gracefully (SIGQUIT: nginx finishes what it has in hand, its log complete).
stop_nginx() { stop_server QUIT; }

# start_nginx_h2c: as start_nginx nolog, its listener speaking h2c (HTTP/2 by prior
# knowledge, `listen ... http2`).
start_nginx_h2c() { start_nginx_listening "http2"; }

# start_nginx_h2_tls CERT KEY: as start_nginx nolog, its listener speaking TLS with the
# certificate and key (PEM) and h2 chosen by ALPN (`listen ... ssl http2`).
start_nginx_h2_tls() {
    start_nginx_listening "ssl http2; ssl_certificate $1; ssl_certificate_key $2"
}

# start_nginx_listening OPTIONS: as start_nginx nolog, with OPTIONS after its listen
# address.
start_nginx_listening() {
    start_nginx nolog
    stop_nginx
    sed -i "s#listen 127.0.0.1:$PORT;#listen 127.0.0.1:$PORT $1;#" "$NGINX_DIR/nginx.conf"
    taskset -c 0 "$NGINX" -c "$NGINX_DIR/nginx.conf" -p "$NGINX_DIR/" 2>/dev/null &
    PID=$!
    wait_port "$PORT" || { echo "!! nginx ($1) did not start" >&2; exit 1; }
}
