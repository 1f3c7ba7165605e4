#!/bin/sh
exec env WIREBENCH_SERVER_LOOP=epoll /tmp/driver-new-8db08c4 "$@"
