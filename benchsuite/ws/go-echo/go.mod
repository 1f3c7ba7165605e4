module wirebench/benchsuite/ws/go-echo

go 1.22

require github.com/gorilla/websocket v1.5.3
