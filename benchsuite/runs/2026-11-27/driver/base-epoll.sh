#!/bin/sh
exec env WIREBENCH_SERVER_LOOP=epoll /tmp/driver-base-8a34b97 "$@"
