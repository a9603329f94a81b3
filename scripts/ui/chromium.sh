#!/usr/bin/env bash
# Makes sure headless Chromium is there for the console's browser tests (make test-ui):
# Debian's chromium package, installed with apt-get when absent (needs root, as CI has).
# Prints the browser's path.
set -euo pipefail
if [ -n "${CHROME_BIN:-}" ] && [ -x "$CHROME_BIN" ]; then
  echo "$CHROME_BIN"
  exit 0
fi
if ! command -v chromium >/dev/null 2>&1; then
  echo "installing Debian's chromium package for the browser tests" >&2
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq >&2
  $SUDO apt-get install -y -qq chromium >&2
fi
command -v chromium
