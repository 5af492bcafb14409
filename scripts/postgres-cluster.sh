#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests and benchmarks: initdb in a
# folder of its own, served on a free loopback port, stopped and removed by
# `stop`. Run as root (the server runs as the `postgres` user) or as any
# other user (the server runs as that user).
#
#   scripts/postgres-cluster.sh start DIR   # prints the server's URL
#   scripts/postgres-cluster.sh stop DIR
#   scripts/postgres-cluster.sh restart DIR # stops it at once (as a crash would) and starts it again
#   scripts/postgres-cluster.sh serve DIR   # prints the URL, then runs the server
#                                           # in the foreground until its parent ends
set -euo pipefail

action=${1:?usage: postgres-cluster.sh start|stop|restart|serve DIR}
dir=${2:?usage: postgres-cluster.sh start|stop|restart|serve DIR}
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
if [ -z "$bin" ] && command -v pg_ctl >/dev/null; then
    bin=$(dirname "$(command -v pg_ctl)")
fi
[ -n "$bin" ] || { echo "postgres-cluster: no PostgreSQL server found (apt install postgresql)" >&2; exit 1; }

as_owner() {
    if [ "$(id -u)" = 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

# fsync off: a process crash loses nothing (the kernel keeps what was
# written), only a machine crash would, and these clusters never outlive one
settings() {
    echo "-c listen_addresses=127.0.0.1 -p $1 -k $dir -c max_connections=200 -c fsync=off -c full_page_writes=off"
}

init() {
    mkdir -p "$dir"
    if [ "$(id -u)" = 0 ]; then
        chown postgres: "$dir"
        runuser -u postgres -- test -x "$dir" ||
            { echo "postgres-cluster: the postgres user cannot reach $dir (a folder above it is private)" >&2; exit 1; }
    fi
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    as_owner "$bin/initdb" -D "$dir/data" -U postgres -A trust --no-sync -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 ||
        { cat "$dir/initdb.log" >&2; exit 1; }
}

case $action in
start)
    init
    # shellcheck disable=SC2046
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 -o "$(settings "$port")" \
        start >/dev/null || { cat "$dir/server.log" >&2; exit 1; }
    echo "postgres://postgres@127.0.0.1:$port/postgres"
    ;;
serve)
    init
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 -o "$(settings "$port")" \
        start >/dev/null || { cat "$dir/server.log" >&2; exit 1; }
    echo "postgres://postgres@127.0.0.1:$port/postgres"
    # stopped once the process that started this one is gone
    parent=$PPID
    while kill -0 "$parent" 2>/dev/null; do sleep 1; done
    as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
    rm -rf "$dir"
    ;;
restart)
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -m immediate -w -t 60 restart >/dev/null ||
        { cat "$dir/server.log" >&2; exit 1; }
    ;;
stop)
    if [ -d "$dir/data" ]; then
        as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
    ;;
*)
    echo "usage: postgres-cluster.sh start|stop|restart|serve DIR" >&2
    exit 2
    ;;
esac
