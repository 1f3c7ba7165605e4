#!/bin/sh
exec env -u WIREBENCH_SERVER_LOOP /tmp/driver-new-8db08c4 "$@"
