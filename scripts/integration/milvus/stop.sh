#!/usr/bin/env bash
# stop.sh RUN_DIR: stops the server start.sh started in RUN_DIR (SIGTERM,
# then SIGKILL after a bounded wait) and waits for it to exit. Idempotent.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

if [[ $# -ne 1 ]]; then
	echo "usage: $0 RUN_DIR" >&2
	exit 2
fi
pid_file="$1/milvus.pid"
[[ -f "$pid_file" ]] || exit 0
pid="$(cat "$pid_file")"

# Only signal the process if it is still our server (pids are reused).
is_ours() { [[ -r "/proc/$pid/cmdline" ]] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q "milvus_lite/lib/milvus"; }

if is_ours; then
	kill -TERM "$pid" 2>/dev/null || true
	for _ in $(seq 1 100); do # 20 s
		is_ours || break
		sleep 0.2
	done
	if is_ours; then
		log "pid $pid ignored SIGTERM for 20 s; killing it"
		kill -KILL "$pid" 2>/dev/null || true
		for _ in $(seq 1 50); do
			is_ours || break
			sleep 0.1
		done
	fi
fi
rm -f "$pid_file"
