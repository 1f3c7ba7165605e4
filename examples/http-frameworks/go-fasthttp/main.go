// go-fasthttp-echo: the hertz-benchmark echo scenario on fasthttp.
// POST (any path) echoes the body as text/plain; GET returns "hello".
//
// Usage: go-fasthttp-echo HOST:PORT
package main

import (
	"log"
	"os"

	"github.com/valyala/fasthttp"
)

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: go-fasthttp-echo HOST:PORT")
	}
	handler := func(ctx *fasthttp.RequestCtx) {
		ctx.SetContentType("text/plain")
		if ctx.IsPost() {
			ctx.SetBody(ctx.PostBody())
			return
		}
		ctx.SetBodyString("hello")
	}
	s := &fasthttp.Server{Handler: handler, MaxRequestBodySize: 16 << 20}
	log.Fatal(s.ListenAndServe(os.Args[1]))
}
