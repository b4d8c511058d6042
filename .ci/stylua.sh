#!/usr/bin/env bash
# Installs StyLua (npm @johnnymorganz/stylua-bin, pinned) for the formatter's
# agreement test and benchmark (engine/format: TestStyLuaAgreement,
# BenchmarkFormatVsStyLua), and prints the binary's path on stdout. Installs
# node and npm on a fresh Debian machine when missing. Called by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "== installing nodejs and npm (Debian)" >&2
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
fi
dir="${XDG_CACHE_HOME:-$HOME/.cache}/forge-lsp-ci/stylua"
mkdir -p "$dir"
if [ ! -x "$dir/node_modules/.bin/stylua" ]; then
  npm install --prefix "$dir" --no-audit --no-fund --loglevel=error @johnnymorganz/stylua-bin@2.5.2 >&2
fi
"$dir/node_modules/.bin/stylua" --version >&2
echo "$dir/node_modules/.bin/stylua"
