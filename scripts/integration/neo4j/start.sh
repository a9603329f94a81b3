#!/usr/bin/env bash
# Starts the embedded Neo4j test server(s) with data under RUN_DIR and prints the
# environment the Go integration tests read (and nothing else) on stdout:
#
#   start.sh RUN_DIR [all|gds|nogds]
#
#   gds    Neo4j + Graph Data Science     GRAPHRAG_TEST_NEO4J_URI, _USER, _PASSWORD
#   nogds  Neo4j alone (fallback tests)   GRAPHRAG_TEST_NEO4J_NOGDS_URI
#   all    both (default)
#
# Bolt listens on 127.0.0.1 only, on a free port, with authentication disabled
# (throwaway data, loopback only: USER is neo4j and PASSWORD empty). Each server
# writes RUN_DIR/neo4j-<mode>.{pid,log} and its data in RUN_DIR/neo4j-<mode>/.
# Env: GRAPHRAG_INTEGRATION_CACHE (as install.sh), GRAPHRAG_NEO4J_HEAP (default
# 2g), GRAPHRAG_NEO4J_START_TIMEOUT (seconds, default 180), GRAPHRAG_NEO4J_PORT (the
# Bolt port of a gds or nogds server, for a test that restarts it where its clients
# connect; default a free port).
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 ]]; then
  echo "usage: $0 RUN_DIR [all|gds|nogds]" >&2
  exit 2
fi
run_dir=$(cd "$1" && pwd)
mode=${2:-all}
cache=${GRAPHRAG_INTEGRATION_CACHE:-$HOME/.cache/graphrag-integration}/neo4j
build=$cache/build
heap=${GRAPHRAG_NEO4J_HEAP:-2g}
timeout=${GRAPHRAG_NEO4J_START_TIMEOUT:-180}

log() { echo "neo4j/start: $*" >&2; }

if [[ ! -f $cache/installed || ! -f $build/neo4j-launcher-1.0.0.jar ]]; then
  log "not installed: run $(dirname "$0")/install.sh first"
  exit 1
fi
port_arg=${GRAPHRAG_NEO4J_PORT:-0}
if [[ $mode == all && $port_arg != 0 ]]; then
  log "GRAPHRAG_NEO4J_PORT names the port of one server: start gds or nogds"
  exit 2
fi
case $mode in
  all) modes=(gds nogds) ;;
  gds | nogds) modes=("$mode") ;;
  *) log "unknown mode $mode (want all, gds or nogds)"; exit 2 ;;
esac

# launch starts one server in the background.
launch() {
  local m=$1 cp jar
  local pidf=$run_dir/neo4j-$m.pid
  if [[ -f $pidf ]] && kill -0 "$(cat "$pidf")" 2>/dev/null; then
    log "$m server already running (pid $(cat "$pidf"))"
    return 1
  fi
  rm -f "$run_dir/neo4j-$m.ready"
  cp=$build/neo4j-launcher-1.0.0.jar
  for jar in "$build"/lib/*.jar; do
    # Without GDS the launcher finds no org.neo4j.gds jar and registers nothing.
    if [[ $m == nogds && $(basename "$jar") == org.neo4j.gds.* ]]; then
      continue
    fi
    cp+=:$jar
  done
  local h=$heap
  [[ $m == nogds ]] && h=512m
  nohup java -Xms256m -Xmx"$h" -XX:+UseG1GC -Dfile.encoding=UTF-8 -cp "$cp" \
    org.graphrag.neo4jlauncher.Launcher "$run_dir/neo4j-$m" "$port_arg" "$run_dir/neo4j-$m.ready" \
    </dev/null >"$run_dir/neo4j-$m.log" 2>&1 &
  echo $! >"$pidf"
  log "$m server starting (pid $!), log in $run_dir/neo4j-$m.log"
}

# bolt_answers performs the Bolt handshake: magic, then versions 5.0-5.4 and 4.4;
# a server that speaks Bolt answers with a non-zero version.
bolt_answers() {
  local reply
  exec 3<>"/dev/tcp/127.0.0.1/$1" 2>/dev/null || return 1
  printf '\x60\x60\xb0\x17\x00\x04\x04\x05\x00\x00\x04\x04\x00\x00\x00\x00\x00\x00\x00\x00' >&3
  reply=$(timeout 5 head -c 4 <&3 | od -An -tx1 | tr -d ' \n') || true
  exec 3<&- 3>&-
  [[ -n $reply && $reply != 00000000 ]]
}

fail() {
  local m=$1
  log "$m server did not become ready: $2; last lines of its log:"
  tail -n 40 "$run_dir/neo4j-$m.log" >&2 || true
  "$(dirname "$0")/stop.sh" "$run_dir" >&2 || true
  exit 1
}

# wait_ready waits for the launcher's ready file (written once gds.version()
# answers in gds mode), then for a Bolt handshake from outside; prints the port.
wait_ready() {
  local m=$1 pid deadline port
  pid=$(cat "$run_dir/neo4j-$m.pid")
  deadline=$(( $(date +%s) + timeout ))
  until [[ -f $run_dir/neo4j-$m.ready ]]; do
    kill -0 "$pid" 2>/dev/null || fail "$m" "the JVM exited"
    (( $(date +%s) < deadline )) || fail "$m" "no ready file after ${timeout}s"
    sleep 0.5
  done
  read -r ready <"$run_dir/neo4j-$m.ready"
  port=${ready#port=}
  port=${port%% *}
  if [[ $m == gds && $ready == *" gds=0" ]]; then
    fail "$m" "no GDS procedures were registered"
  fi
  until bolt_answers "$port"; do
    (( $(date +%s) < deadline )) || fail "$m" "Bolt on port $port does not answer"
    sleep 0.5
  done
  echo "$port"
}

for m in "${modes[@]}"; do
  launch "$m"
done
for m in "${modes[@]}"; do
  port=$(wait_ready "$m") || exit 1
  log "$m server ready on bolt://127.0.0.1:$port"
  if [[ $m == gds ]]; then
    echo "export GRAPHRAG_TEST_NEO4J_URI=bolt://127.0.0.1:$port"
    echo "export GRAPHRAG_TEST_NEO4J_USER=neo4j"
    echo "export GRAPHRAG_TEST_NEO4J_PASSWORD="
  else
    echo "export GRAPHRAG_TEST_NEO4J_NOGDS_URI=bolt://127.0.0.1:$port"
  fi
done
