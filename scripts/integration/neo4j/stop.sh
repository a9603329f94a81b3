#!/usr/bin/env bash
# Stops the servers start.sh started in RUN_DIR (every RUN_DIR/neo4j-*.pid) and
# waits for them to exit: SIGTERM lets Neo4j shut down cleanly, SIGKILL follows
# after GRAPHRAG_NEO4J_STOP_TIMEOUT seconds (default 60). Idempotent.
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 RUN_DIR" >&2
  exit 2
fi
run_dir=$1
timeout=${GRAPHRAG_NEO4J_STOP_TIMEOUT:-60}

log() { echo "neo4j/stop: $*" >&2; }

shopt -s nullglob
# Signal every server first so that they shut down in parallel, then wait.
declare -A pids=()
for pidf in "$run_dir"/neo4j-*.pid; do
  pid=$(cat "$pidf")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    pids[$pidf]=$pid
  else
    rm -f "$pidf"
  fi
done
for pidf in "${!pids[@]}"; do
  pid=${pids[$pidf]}
  for (( i = 0; i < timeout * 2; i++ )); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  if kill -0 "$pid" 2>/dev/null; then
    log "pid $pid still running after ${timeout}s, killing it"
    kill -KILL "$pid" 2>/dev/null || true
    while kill -0 "$pid" 2>/dev/null; do sleep 0.2; done
  fi
  log "stopped $(basename "$pidf" .pid) (pid $pid)"
  rm -f "$pidf"
done
