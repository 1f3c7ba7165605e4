#!/bin/sh
# The amqpprox scenario: wirebench's dummy broker behind haproxy in TCP mode.
# haproxy listens on HOST:PORT, where the suite's load connects; the broker listens
# on a free port beside it. Both stay in this process group, so the suite stops
# them together. Usage: behind-haproxy.sh HOST PORT WIREBENCH
set -eu
host=$1 port=$2 wb=$3
dir=$(mktemp -d "${TMPDIR:-/tmp}/wirebench-haproxy.XXXXXX")
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
bport=$(free_port)
"$wb" serve amqp --listen "127.0.0.1:$bport" --threads 1 &
# haproxy must not accept (and so look ready) before the broker behind it listens.
python3 - "$bport" <<'PY'
import socket, sys, time
for _ in range(100):
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), 0.1).close()
        sys.exit(0)
    except OSError:
        time.sleep(0.05)
sys.exit("behind-haproxy.sh: the broker did not start listening within 5 s")
PY
cat > "$dir/haproxy.cfg" <<CFG
defaults
    mode tcp
    timeout connect 5s
    timeout client 1h
    timeout server 1h
frontend amqp
    bind $host:$port
    default_backend broker
backend broker
    server broker 127.0.0.1:$bport
CFG
exec haproxy -f "$dir/haproxy.cfg" -db
