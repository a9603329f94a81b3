#!/usr/bin/env bash
# The chaos suite (make chaos; not part of CI): builds the binaries, starts Neo4j + GDS
# and Milvus for the multi-process layout (scripts/integration installs them from Maven
# Central and PyPI, cached), and runs the chaos command (tools/cmd/chaos) with the
# arguments given:
#
#   tools/cmd/chaos/run.sh [-runs-up 20] [-runs-nats 5] [-runs-cluster 20] [-runs-multi 20] [-runs-rolling 5]
#     [-outage-neo4j 5m] [-outage-milvus 5m] [-shard-graphers 1,2,4] [-docs 120] [-seed N] [-out FILE] [-doc FILE]
#
# With -runs-multi 0 -runs-rolling 0 -outage-neo4j 0 -outage-milvus 0 -shard-graphers '' no
# scenario runs the multi-process layout, and no store server is started. Everything
# started is stopped on exit; the work directory (logs, data of every run) is kept
# when the suite fails, removed when it passes (CHAOS_KEEP=1 keeps it).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
integration=$root/scripts/integration

work=$(mktemp -d "${TMPDIR:-/tmp}/graphrag-chaos.XXXXXX")
started=()
status=1
cleanup() {
  for b in "${started[@]}"; do
    "$integration/$b/stop.sh" "$work/$b" || echo "chaos: stopping $b failed" >&2
  done
  if [[ $status == 0 && ${CHAOS_KEEP:-} != 1 ]]; then
    rm -rf "$work"
  else
    echo "chaos: logs and data in $work" >&2
  fi
}
trap cleanup EXIT

echo "== build" >&2
bin=$work/bin
mkdir -p "$bin"
(cd "$root" && go build -o "$bin/graphrag" ./cmd/graphrag)
for s in extractor grapher summarizer query; do
  (cd "$root" && go build -o "$bin/$s" "./services/$s/cmd/$s")
done
# The NATS server the suite kills: the same module version the platform embeds.
(cd "$root/pkg" && go build -o "$bin/nats-server" github.com/nats-io/nats-server/v2)
(cd "$root/tools" && go build -o "$bin/chaos" ./cmd/chaos)
# The store servers are needed unless every multi-process scenario is off.
multi=0
[[ $("$bin/chaos" -needs-stores "$@") == yes ]] && multi=1

store_args=()
if [[ $multi == 1 ]]; then
  for b in neo4j milvus; do
    echo "== install and start $b" >&2
    "$integration/$b/install.sh" >&2
    mkdir -p "$work/$b"
    mode=()
    [[ $b == neo4j ]] && mode=(gds)
    env_lines=$("$integration/$b/start.sh" "$work/$b" "${mode[@]}")
    started+=("$b")
    while IFS= read -r line; do
      [[ $line =~ ^export\ [A-Z0-9_]+=.*$ ]] || { echo "chaos: unexpected output from $b/start.sh: $line" >&2; exit 1; }
      eval "$line"
    done <<<"$env_lines"
  done
  # The outage scenario stops and starts them again in these run directories.
  store_args=(-neo4j-uri "$GRAPHRAG_TEST_NEO4J_URI" -milvus-address "$GRAPHRAG_TEST_MILVUS_ADDR"
    -integration-dir "$integration" -neo4j-run-dir "$work/neo4j" -milvus-run-dir "$work/milvus")
fi

echo "== chaos" >&2
cd "$root"
"$bin/chaos" -bin "$bin" -work "$work/runs" -command "$0 $*" "${store_args[@]}" "$@"
status=0
