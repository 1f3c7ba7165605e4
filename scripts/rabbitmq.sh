#!/usr/bin/env bash
# Starts and stops a private RabbitMQ (Debian's rabbitmq-server) on 127.0.0.1 only,
# without systemd: its own epmd bound to loopback, data, logs and PID file under DIR.
#   scripts/rabbitmq.sh start DIR [AMQP DIST EPMD]   # returns once it accepts AMQP
#   scripts/rabbitmq.sh stop DIR    # stops it and its epmd by the PIDs it recorded
#   scripts/rabbitmq.sh depth DIR   # prints "queue messages" lines (rabbitmqctl list_queues)
# The ports default to RabbitMQ's own (AMQP 5672, distribution 25672, epmd 4369). Two
# brokers on one machine (two test runs at once) each give three free ports: the epmd
# is private too, so both can keep the node name rabbit@localhost. `start` records the
# ports in DIR/ports, where `stop` and `depth` read them.
set -euo pipefail
cmd=${1:?start, stop or depth}
dir=${2:?a directory for its data}
if [ "$cmd" = start ]; then
    amqp_port=${3:-5672} dist_port=${4:-25672} epmd_port=${5:-4369}
    mkdir -p "$dir"
    echo "$amqp_port $dist_port $epmd_port" >"$dir/ports"
elif [ -s "$dir/ports" ]; then
    read -r amqp_port dist_port epmd_port <"$dir/ports"
else
    amqp_port=5672 dist_port=25672 epmd_port=4369
fi
node=rabbit@localhost
export RABBITMQ_NODENAME=$node RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 \
    RABBITMQ_NODE_PORT=$amqp_port RABBITMQ_DIST_PORT=$dist_port \
    RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}" \
    RABBITMQ_MNESIA_BASE=$dir/mnesia RABBITMQ_LOG_BASE=$dir/log \
    RABBITMQ_PID_FILE=$dir/rabbit.pid ERL_EPMD_ADDRESS=127.0.0.1 ERL_EPMD_PORT=$epmd_port

case $cmd in
start)
    if (exec 3<>/dev/tcp/127.0.0.1/"$amqp_port") 2>/dev/null; then
        echo "rabbitmq.sh: something already listens on 127.0.0.1:$amqp_port; stop it first" >&2
        exit 1
    fi
    mkdir -p "$dir/mnesia" "$dir/log"
    chown -R rabbitmq:rabbitmq "$dir"
    epmd -address 127.0.0.1 -port "$epmd_port" >"$dir/epmd.log" 2>&1 &
    echo $! >"$dir/epmd.pid"
    rabbitmq-server -detached >"$dir/start.log" 2>&1
    # -detached returns at once even if boot fails later: wait for the AMQP listener.
    for _ in $(seq 1 300); do
        if python3 - "$amqp_port" <<'PY' 2>/dev/null; then exit 0; fi
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1)
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
