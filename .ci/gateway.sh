#!/usr/bin/env bash
# forge-lsp gateway serve driven by the official OpenAI Node SDK (npm
# openai): streamed chat completions and tool calls against a streaming
# and a non-streaming scripted endpoint, and a client abort that must
# cancel the endpoint's request (.ci/gateway/stream.test.mjs). Installs
# node and npm on a fresh Debian machine when missing. Called by .ci/run.
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

cd .ci/gateway
npm ci --no-audit --no-fund --loglevel=error
node --test stream.test.mjs
