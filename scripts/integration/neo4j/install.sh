#!/usr/bin/env bash
# Installs the Neo4j test server: Neo4j 5.26 Community and OpenGDS 2.13 from
# Maven Central, run embedded by the launcher in ./launcher (built here with the
# machine's JDK 17 and Maven). Idempotent: exits 0 at once when the launcher was
# already built from the same sources.
#
# Env: GRAPHRAG_INTEGRATION_CACHE (default ~/.cache/graphrag-integration); this
# backend uses its neo4j/ subdirectory: m2/ (Maven repository), build/ (launcher
# jar and lib/ with every runtime jar), installed (stamp).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${GRAPHRAG_INTEGRATION_CACHE:-$HOME/.cache/graphrag-integration}/neo4j

log() { echo "neo4j/install: $*" >&2; }

for tool in java mvn sha256sum; do
  command -v "$tool" >/dev/null || { log "$tool is required"; exit 1; }
done
java_major=$(java -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')
if [[ ${java_major%%.*} -lt 17 ]]; then
  log "Java 17 or newer is required, found ${java_major:-unknown}"
  exit 1
fi

# The stamp names the sources the build came from, so editing the launcher or
# a version in pom.xml rebuilds.
sources=$(cd "$here/launcher" && find pom.xml src -type f | LC_ALL=C sort)
stamp=$(cd "$here/launcher" && sha256sum $sources | sha256sum | cut -d' ' -f1)
if [[ -f $cache/installed && $(cat "$cache/installed") == "$stamp" && -f $cache/build/neo4j-launcher-1.0.0.jar ]]; then
  log "already installed in $cache"
  exit 0
fi

mkdir -p "$cache"
rm -rf "$cache/build" "$cache/installed"
# Debian's Maven 3.8 prints colour resets even in batch mode: strip them.
mvn_quiet() { mvn "$@" 2>&1 | sed 's/\x1b\[[0-9;]*m//g'; }
mvn_args=(-B -q -f "$here/launcher/pom.xml" -Dmaven.repo.local="$cache/m2" -Dlauncher.buildDir="$cache/build" package)
start=$(date +%s)
# Offline first: with a warm repository nothing needs the network.
if [[ -d $cache/m2 ]] && mvn_quiet -o "${mvn_args[@]}" >"$cache/mvn-offline.log"; then
  log "built offline from the cached Maven repository"
else
  log "resolving Neo4j and GDS from Maven Central (about 170 MB, once)"
  rm -rf "$cache/build"
  mvn_quiet "${mvn_args[@]}" >&2
fi
ls "$cache/build/lib" | grep -q '^org\.neo4j\.gds\.' || { log "no GDS jars in $cache/build/lib"; exit 1; }
echo "$stamp" >"$cache/installed"
log "installed in $cache in $(( $(date +%s) - start ))s"
