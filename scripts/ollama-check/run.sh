#!/usr/bin/env bash
# Talks to the query service's Ollama-compatible routes with Ollama's official Python
# client: scripts/ollama-check/run.sh HOST TOKEN MODEL QUESTION EXPECT
# (HOST is the service's base URL, without /api; EXPECT is a word the answer must
# contain). The client is installed from PyPI into a venv under ~/.cache once.
# Exit status 3: the client could not be installed (the caller may skip).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="${GRAPHRAG_OLLAMA_VENV:-$HOME/.cache/graphrag-ollama-venv}"
stamp="$venv/.requirements"
if ! cmp -s "$here/requirements.txt" "$stamp" 2>/dev/null; then
  { python3 -m venv "$venv" && "$venv/bin/pip" install -q -r "$here/requirements.txt" && cp "$here/requirements.txt" "$stamp"; } >&2 || exit 3
fi
exec "$venv/bin/python" "$here/check.py" "$@"
