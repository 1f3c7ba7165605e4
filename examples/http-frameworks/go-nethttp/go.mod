module wirebench.example/go-nethttp-echo

go 1.21
