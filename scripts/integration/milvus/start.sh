#!/usr/bin/env bash
# start.sh RUN_DIR: starts a Milvus Lite server on 127.0.0.1 at a free port
# with its data in RUN_DIR/milvus.db (so a second start on the same RUN_DIR
# finds the data again), waits until a client can list collections and
# prints `export GRAPHRAG_TEST_MILVUS_ADDR=127.0.0.1:PORT` on stdout (nothing
# else). Pid: RUN_DIR/milvus.pid; log: RUN_DIR/milvus.log.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

if [[ $# -ne 1 ]]; then
	echo "usage: $0 RUN_DIR" >&2
	exit 2
fi
run_dir="$(mkdir -p "$1" && cd "$1" && pwd)"
timeout="${GRAPHRAG_MILVUS_START_TIMEOUT:-60}"

if ! milvus_installed; then
	log "not installed: run $MILVUS_SCRIPT_DIR/install.sh first"
	exit 1
fi
if [[ -f "$run_dir/milvus.pid" ]] && kill -0 "$(cat "$run_dir/milvus.pid")" 2>/dev/null; then
	log "already running in $run_dir (pid $(cat "$run_dir/milvus.pid")); stop it first"
	exit 1
fi

py="$MILVUS_VENV/bin/python"
lib="$("$py" -c "$MILVUS_FIND_LIB")"
# A free port chosen by the kernel; the short window before the server binds
# it is accepted (the health check fails clearly if another process wins). A restart
# in the same RUN_DIR reuses the previous port, so connected clients reconnect.
if [[ -s "$run_dir/milvus.port" ]]; then
	port=$(cat "$run_dir/milvus.port")
else
	port="$("$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
fi
addr="127.0.0.1:$port"

# The binary's arguments are those milvus_lite.server.Server passes for a
# TCP address: data file, address, log level. A background job of a
# non-interactive shell ignores SIGINT, so the caller's Ctrl-C does not stop
# it; stop.sh does. exec keeps $! the server's pid.
(
	cd "$run_dir"
	export LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	exec "$lib/milvus" "$run_dir/milvus.db" "$addr" "${GRAPHRAG_MILVUS_LOG_LEVEL:-ERROR}"
) >>"$run_dir/milvus.log" 2>&1 </dev/null &
pid=$!
echo "$pid" >"$run_dir/milvus.pid"
echo "$port" >"$run_dir/milvus.port"

if ! "$py" "$MILVUS_SCRIPT_DIR/healthcheck.py" "$addr" "$timeout" "$pid" 2>>"$run_dir/milvus.log"; then
	log "server did not become healthy on $addr within ${timeout}s; last lines of $run_dir/milvus.log:"
	tail -n 30 "$run_dir/milvus.log" >&2 || true
	"$MILVUS_SCRIPT_DIR/stop.sh" "$run_dir" || true
	exit 1
fi
log "listening on $addr (pid $pid, data $run_dir/milvus.db)"
echo "export GRAPHRAG_TEST_MILVUS_ADDR=$addr"
