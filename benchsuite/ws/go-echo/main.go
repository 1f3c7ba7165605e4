// A WebSocket echo server on gorilla/websocket, the peer `serve ws` is measured
// against (benchsuite/ws/run.sh, examples/ws-servers.toml): every message goes back
// with its type, one goroutine per connection, as gorilla's own echo example.
package main

import (
	"flag"
	"log"
	"net/http"

	"github.com/gorilla/websocket"
)

var upgrader = websocket.Upgrader{ReadBufferSize: 16384, WriteBufferSize: 16384}

func echo(w http.ResponseWriter, r *http.Request) {
	c, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer c.Close()
	c.SetReadLimit(16 << 20)
	for {
		kind, msg, err := c.ReadMessage()
		if err != nil {
			return
		}
		if err := c.WriteMessage(kind, msg); err != nil {
			return
		}
	}
}

func main() {
	addr := flag.String("listen", "127.0.0.1:9001", "HOST:PORT to listen on")
	flag.Parse()
	http.HandleFunc("/", echo)
	log.Printf("go-echo: listening on %s", *addr)
	log.Fatal(http.ListenAndServe(*addr, nil))
}
