#!/usr/bin/env bash
# A newcomer's first hour, as README.md and docs/gateway.md tell it, on a
# fresh clone: install forge-lsp with `go install ./cmd/forge-lsp` (into a
# temporary GOBIN), start a local model server that speaks only what
# Ollama speaks (.ci/newcomer/ollama.go: /v1/models with id, object,
# created and owned_by, and /v1/chat/completions), and run a shipped
# example against it: first straight at the server, as the README's quick
# start warns (the run stops and says to describe the models in a gateway
# file), then with the README's gateway file for Ollama, copied from it
# (and the same as docs/gateway.md's).
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS=-buildvcs=false
repo=$(pwd)
work=$(mktemp -d)
srv=""
cleanup() {
  if [ -n "$srv" ]; then kill "$srv" 2>/dev/null || true; wait "$srv" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

echo "-- a fresh clone"
git clone --quiet "$repo" "$work/clone"
cd "$work/clone"

echo "-- go install ./cmd/forge-lsp (README: put forge-lsp on your PATH)"
GOBIN="$work/bin" go install ./cmd/forge-lsp
export PATH="$work/bin:$PATH"
forge-lsp version

echo "-- an Ollama-style server"
go build -o "$work/ollama" "$repo/.ci/newcomer/ollama.go"
"$work/ollama" "$work/addr" 2>"$work/ollama.log" &
srv=$!
# Wait for the server's address file (it appears once it accepts), with a
# generous bound only for failure.
for _ in $(seq 1 600); do
  [ -s "$work/addr" ] && break
  kill -0 "$srv" 2>/dev/null || { echo "the server exited:"; cat "$work/ollama.log"; exit 1; }
  sleep 0.1
done
[ -s "$work/addr" ] || { echo "the server did not start"; exit 1; }
addr=$(cat "$work/addr")
for v in PROMPTFORGE_GATEWAY_CONFIG PROMPTFORGE_GATEWAY_URL PROMPTFORGE_GATEWAY_API_KEY; do unset "$v"; done

echo "-- README quick start: straight at the server's /v1"
set +e
PROMPTFORGE_GATEWAY_URL="http://$addr/v1" PROMPTFORGE_GATEWAY_API_KEY=unused \
  forge-lsp run examples/topics.md >"$work/direct.out" 2>"$work/direct.err"
code=$?
set -e
cat "$work/direct.err"
if [ "$code" = 0 ] || ! grep -q -- "--gateway-config FILE" "$work/direct.err"; then
  echo "a plain server's catalog has no descriptions: the run must fail and say to use a gateway file (exit $code)"; exit 1
fi

echo "-- the README's gateway file for Ollama"
# The file exactly as the README shows it (docs/gateway.md shows the same),
# pointed at the scripted server.
block() { awk -v start="$2" 'index($0, start) == 1 {found=1} found && /^```toml/ {inblock=1; next} inblock && /^```/ {exit} inblock {print}' "$1"; }
block README.md "a model you have pulled" >"$work/gateway.toml"
block docs/gateway.md "Ollama on this machine" >"$work/doc.toml"
diff -u "$work/doc.toml" "$work/gateway.toml" || { echo "README.md and docs/gateway.md show different Ollama files"; exit 1; }
grep -q 'base_url = "http://127.0.0.1:11434/v1"' "$work/gateway.toml" || { echo "docs/gateway.md's Ollama example changed:"; cat "$work/gateway.toml"; exit 1; }
sed -i "s|http://127.0.0.1:11434/v1|http://$addr/v1|" "$work/gateway.toml"
cat "$work/gateway.toml"
forge-lsp check examples/topics.md
forge-lsp run --gateway-config "$work/gateway.toml" examples/topics.md >"$work/run.out"
cat "$work/run.out"
grep -q "A short paragraph about" "$work/run.out" || { echo "the run's result does not come from the model"; exit 1; }
echo "-- the newcomer's path works"
