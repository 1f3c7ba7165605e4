#!/bin/sh
# Starts nginx in the foreground with one worker on HOST:PORT, `return 200 "hello"`
# for every request (a POST body is read and discarded: nginx cannot echo without
# extra modules). Config, pid, logs and temp paths live in a fresh temp directory.
# Usage: nginx.sh HOST PORT
set -eu
dir=$(mktemp -d "${TMPDIR:-/tmp}/wirebench-nginx.XXXXXX")
cat > "$dir/nginx.conf" <<CONF
daemon off;
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $dir/body;
    proxy_temp_path $dir/proxy;
    fastcgi_temp_path $dir/fastcgi;
    uwsgi_temp_path $dir/uwsgi;
    scgi_temp_path $dir/scgi;
    keepalive_requests 10000000;
    client_max_body_size 16m;
    client_body_buffer_size 128k;
    server {
        listen $1:$2;
        location / { return 200 "hello"; }
    }
}
CONF
exec nginx -c "$dir/nginx.conf" -p "$dir/"
