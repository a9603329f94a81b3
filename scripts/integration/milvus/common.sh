# Shared settings of the Milvus integration scripts (sourced, not run).
# shellcheck shell=bash

MILVUS_SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
MILVUS_CACHE="${GRAPHRAG_INTEGRATION_CACHE:-$HOME/.cache/graphrag-integration}/milvus"
MILVUS_VENV="$MILVUS_CACHE/venv"
MILVUS_STAMP="$MILVUS_VENV/.graphrag-installed"

# requirements_hash identifies the pinned set; a different hash means
# reinstall.
requirements_hash() {
	sha256sum "$MILVUS_SCRIPT_DIR/requirements.txt" | cut -d' ' -f1
}

milvus_installed() {
	[[ -f "$MILVUS_STAMP" && "$(cat "$MILVUS_STAMP")" == "$(requirements_hash)" && -x "$MILVUS_VENV/bin/python" ]]
}

# MILVUS_FIND_LIB prints the directory of the server binary shipped in the
# milvus-lite wheel. find_spec does not import the package (its __init__
# needs pkg_resources, which new virtualenvs lack).
MILVUS_FIND_LIB='import importlib.util, os; print(os.path.join(os.path.dirname(importlib.util.find_spec("milvus_lite").origin), "lib"))'

log() { echo "milvus: $*" >&2; }
