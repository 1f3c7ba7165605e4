// go-nethttp-echo: the hertz-benchmark echo scenario on Go's standard net/http.
// POST (any path) echoes the body as text/plain; GET returns "hello".
//
// Usage: go-nethttp-echo HOST:PORT
package main

import (
	"io"
	"log"
	"net/http"
	"os"
)

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: go-nethttp-echo HOST:PORT")
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write([]byte("hello"))
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write(body)
	})
	log.Fatal(http.ListenAndServe(os.Args[1], h))
}
