#!/usr/bin/env bash
# sdk.sh DIR TEST: runs a Node test suite that drives the built forge-lsp
# with an official SDK: .ci/gateway (npm openai against gateway serve:
# streamed chat completions and tool calls, a client abort that must cancel
# the endpoint's request) and .ci/mcp (@modelcontextprotocol/sdk against
# forge-lsp mcp over stdio and streamable HTTP with a bearer token).
# FORGE_LSP_BIN names the binary for the suite. Installs node and npm on a
# fresh Debian machine when missing. Called by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
dir=$1
test=$2

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "== installing nodejs and npm (Debian)"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/forge-lsp" ./cmd/forge-lsp
export FORGE_LSP_BIN="$tmp/forge-lsp"

cd ".ci/$dir"
npm ci --no-audit --no-fund --loglevel=error
node --test "$test"
