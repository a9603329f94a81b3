#!/usr/bin/env bash
# Reads an export with other libraries than the ones that wrote it:
#   scripts/export-check/run.sh DIR EXPECTED_JSON
# DIR holds jsonl/, graphml/ and parquet/ exports of one corpus; EXPECTED_JSON is the
# export's summary ({"entities": n, ...}). The readers (pyarrow, networkx, pandas) are
# installed from PyPI into a venv under ~/.cache once. With GRAPHRAG_EXPORT_MSGRAPHRAG=1
# Microsoft GraphRAG itself (about 1.3 GB) is installed into a second venv and its query
# loaders (graphrag.query.indexer_adapters) read the parquet tables too; that check also
# runs whenever that venv exists.
# Exit status 3: the readers could not be installed (the caller may skip).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="${GRAPHRAG_EXPORT_VENV:-$HOME/.cache/graphrag-export-venv}"
ms_venv="${GRAPHRAG_MSGRAPHRAG_VENV:-$HOME/.cache/graphrag-msgraphrag-venv}"
stamp="$venv/.requirements"
if ! cmp -s "$here/requirements.txt" "$stamp" 2>/dev/null; then
  { python3 -m venv "$venv" && "$venv/bin/pip" install -q -r "$here/requirements.txt" && cp "$here/requirements.txt" "$stamp"; } >&2 || exit 3
fi
"$venv/bin/python" "$here/check.py" "$1" "$2"
if [[ "${GRAPHRAG_EXPORT_MSGRAPHRAG:-}" == 1 && ! -x "$ms_venv/bin/python" ]]; then
  { python3 -m venv "$ms_venv" && "$ms_venv/bin/pip" install -q graphrag==3.3.0; } >&2 || exit 3
fi
if [[ -x "$ms_venv/bin/python" ]] && "$ms_venv/bin/python" -c 'import graphrag.query.indexer_adapters' 2>/dev/null; then
  "$ms_venv/bin/python" "$here/check_msgraphrag.py" "$1/parquet" "$2"
else
  echo "Microsoft GraphRAG loaders: not installed (GRAPHRAG_EXPORT_MSGRAPHRAG=1 installs them); skipped"
fi
