#!/bin/sh
exec env -u WIREBENCH_SERVER_LOOP /tmp/driver-base-8a34b97 "$@"
