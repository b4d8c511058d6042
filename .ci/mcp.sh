#!/usr/bin/env bash
# forge-lsp mcp driven by the official MCP TypeScript SDK client
# (@modelcontextprotocol/sdk) over stdio and over streamable HTTP with a
# bearer token, against a scripted gateway (.ci/mcp/client.test.mjs).
# Installs node and npm on a fresh Debian machine when missing. Called by
# .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "== installing nodejs and npm (Debian)"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/forge-lsp" ./cmd/forge-lsp
export FORGE_LSP_BIN="$tmp/forge-lsp"

cd .ci/mcp
npm ci --no-audit --no-fund --loglevel=error
node --test client.test.mjs
