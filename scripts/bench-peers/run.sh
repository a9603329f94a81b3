#!/usr/bin/env bash
# make bench-peers: times pkg/leiden against python-igraph, leidenalg and
# graspologic-native on the same edge lists in one run and writes
# docs/benchmarks-peers.md. The virtual environment is cached (created again
# when requirements.txt changes). Takes about 8 minutes on 2 shared cores,
# most of it leidenalg on the 1M-edge graph (~40 s a run).
#
#   RUNS=5                 timed runs per implementation and graph (>= 3)
#   OUT=docs/benchmarks-peers.md
#   STABLE=1               also time pkg/leiden until stable (0 to skip)
#   DEV_DATA_DIR=/tmp/d    first re-export the dev entity graph from the
#                          embedded index in that directory (made by
#                          bin/graphrag eval -dataset /work/shared/datasets/hotpotqa
#                          -data-dir /tmp/d -out /tmp/x.json -strategies bm25)
set -euo pipefail
cd "$(dirname "$0")/../.."
GO=${GO:-go}
cache=${GRAPHRAG_BENCH_PEERS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/graphrag-bench-peers}
venv=$cache/venv
req=scripts/bench-peers/requirements.txt
dev=pkg/leiden/testdata/dev-entities.edges.gz

if ! cmp -s "$req" "$venv/.requirements"; then
  echo "bench-peers: installing $(tr '\n' ' ' <"$req")into $venv" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$req"
  cp "$req" "$venv/.requirements"
fi

helper=$cache/benchpeers
(cd pkg && "$GO" build -o "$helper" ./leiden/internal/benchpeers)
"$helper" gen -out "$cache/graphs"
if [[ -n ${DEV_DATA_DIR:-} ]]; then
  "$helper" export -data-dir "$DEV_DATA_DIR" -out "$dev"
fi

commit=$(git rev-parse --short HEAD)
if [[ -n $(git status --porcelain -- pkg/leiden scripts/bench-peers) ]]; then
  commit="$commit (with uncommitted changes to pkg/leiden or scripts/bench-peers)"
fi
args=()
[[ ${STABLE:-1} == 0 ]] && args+=(--no-stable)
"$venv/bin/python" scripts/bench-peers/peers.py --helper "$helper" \
  --graph "sparse-10k=$cache/graphs/sparse-10k.edges" \
  --graph "sparse-100k=$cache/graphs/sparse-100k.edges" \
  --graph "sparse-1m=$cache/graphs/sparse-1m.edges" \
  --graph "dev-entities=$dev" \
  --runs "${RUNS:-5}" --out "${OUT:-docs/benchmarks-peers.md}" \
  --commit "$commit" --go-version "$("$GO" version)" \
  --command "make bench-peers RUNS=${RUNS:-5}" "${args[@]}" >/dev/null
echo "bench-peers: wrote ${OUT:-docs/benchmarks-peers.md}" >&2
