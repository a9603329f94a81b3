#!/usr/bin/env bash
# Installs Milvus Lite (server binary) and pymilvus (health check) into a
# virtualenv under $GRAPHRAG_INTEGRATION_CACHE/milvus (default
# ~/.cache/graphrag-integration/milvus). Idempotent: exits at once when the
# pinned set in requirements.txt is already installed.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

if milvus_installed; then
	log "already installed in $MILVUS_VENV"
	exit 0
fi

PYTHON="${PYTHON:-python3}"
if ! "$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 9) else 1)' 2>/dev/null; then
	log "need Python >= 3.9 with venv (set PYTHON=...)"
	exit 1
fi

mkdir -p "$MILVUS_CACHE"
# One installer at a time (parallel CI jobs share the cache).
exec 9>"$MILVUS_CACHE/.install.lock"
flock 9
if milvus_installed; then
	exit 0
fi

start=$(date +%s)
rm -rf "$MILVUS_VENV"
"$PYTHON" -m venv "$MILVUS_VENV"
# Wheels only: nothing is compiled. pip's HTTP cache goes under the cache
# directory too (when the index allows caching), so that CI keeps it with
# the virtualenv.
PIP_CACHE_DIR="$MILVUS_CACHE/pip-cache" "$MILVUS_VENV/bin/python" -m pip install \
	--quiet --disable-pip-version-check --only-binary=:all: \
	-r "$MILVUS_SCRIPT_DIR/requirements.txt" >&2
# The server binary ships inside the wheel; fail now rather than at start.
lib="$("$MILVUS_VENV/bin/python" -c "$MILVUS_FIND_LIB")"
if [[ ! -x "$lib/milvus" ]]; then
	log "milvus-lite installed but $lib/milvus is missing"
	exit 1
fi
requirements_hash >"$MILVUS_STAMP"
log "installed in $MILVUS_VENV in $(($(date +%s) - start)) s"
