#!/usr/bin/env bash
# Starts and stops a private RabbitMQ (Debian's rabbitmq-server) on 127.0.0.1 only,
# without systemd: its own epmd bound to loopback, data, logs and PID file under DIR.
#   scripts/rabbitmq.sh start DIR   # returns once it accepts AMQP on 127.0.0.1:5672
#   scripts/rabbitmq.sh stop DIR    # stops it and its epmd by the PIDs it recorded
#   scripts/rabbitmq.sh depth DIR   # prints "queue messages" lines (rabbitmqctl list_queues)
set -euo pipefail
cmd=${1:?start, stop or depth}
dir=${2:?a directory for its data}
node=rabbit@localhost
export RABBITMQ_NODENAME=$node RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 \
    RABBITMQ_NODE_PORT=5672 RABBITMQ_DIST_PORT=25672 \
    RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}" \
    RABBITMQ_MNESIA_BASE=$dir/mnesia RABBITMQ_LOG_BASE=$dir/log \
    RABBITMQ_PID_FILE=$dir/rabbit.pid ERL_EPMD_ADDRESS=127.0.0.1

case $cmd in
start)
    if (exec 3<>/dev/tcp/127.0.0.1/5672) 2>/dev/null; then
        echo "rabbitmq.sh: something already listens on 127.0.0.1:5672; stop it first" >&2
        exit 1
    fi
    mkdir -p "$dir/mnesia" "$dir/log"
    chown -R rabbitmq:rabbitmq "$dir"
    epmd -address 127.0.0.1 >"$dir/epmd.log" 2>&1 &
    echo $! >"$dir/epmd.pid"
    rabbitmq-server -detached >"$dir/start.log" 2>&1
    # -detached returns at once even if boot fails later: wait for the AMQP listener.
    for _ in $(seq 1 300); do
        if python3 - <<'PY' 2>/dev/null; then exit 0; fi
import socket
s = socket.create_connection(("127.0.0.1", 5672), timeout=1)
s.sendall(b"AMQP\x00\x00\x09\x01")
s.settimeout(2)
assert s.recv(1)[:1] == b"\x01"
PY
        sleep 0.1
    done
    echo "rabbitmq.sh: RabbitMQ did not accept AMQP within 30 s; its log:" >&2
    tail -n 30 "$dir"/log/*.log >&2 || true
    exit 1
    ;;
stop)
    if [ -s "$dir/rabbit.pid" ]; then
        pid=$(cat "$dir/rabbit.pid")
        kill -TERM "$pid" 2>/dev/null || true
        for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
    fi
    if [ -s "$dir/epmd.pid" ]; then
        kill -TERM "$(cat "$dir/epmd.pid")" 2>/dev/null || true
    fi
    ;;
depth)
    rabbitmqctl -n "$node" -q list_queues name messages
    ;;
*)
    echo "rabbitmq.sh: unknown command $cmd" >&2
    exit 2
    ;;
esac
