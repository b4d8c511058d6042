#!/usr/bin/env bash
# Editor integrations: builds forge-lsp, runs the VS Code extension's tests
# (unit tests plus the real binary driven with vscode-jsonrpc), packages the
# .vsix, then runs the headless Neovim test against the same binary. Installs
# what it needs on a fresh Debian machine. Called by .ci/run after the Go tests.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
export PATH="$PATH:/usr/local/go/bin"

apt_updated=0
need_apt() {
  if [ "$apt_updated" = 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    apt_updated=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

if ! command -v nvim >/dev/null 2>&1; then
  echo "== installing neovim (Debian)"
  need_apt neovim
fi
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "== installing nodejs and npm (Debian)"
  need_apt nodejs npm
fi
echo "== $(nvim --version | head -1), node $(node --version), npm $(npm --version)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "== go build forge-lsp"
go build -o "$tmp/forge-lsp" ./cmd/forge-lsp
export FORGE_LSP_BIN="$tmp/forge-lsp"
"$FORGE_LSP_BIN" version

echo "== VS Code extension: npm ci, npm test"
cd "$root/editors/vscode"
npm ci --no-audit --no-fund --loglevel=error
# The live-then-replay test leaves its cassette here for the Neovim test.
export FORGE_CASSETTE_OUT="$tmp/greet.jsonl"
npm test

echo "== VS Code extension: vsce package"
rm -f ./*.vsix
npx --no-install vsce package --out "$tmp/promptforge.vsix" </dev/null
# An installable .vsix holds the manifest, the bundle and the grammar.
listing=$(unzip -l "$tmp/promptforge.vsix" 2>/dev/null || python3 -c 'import sys,zipfile; print("\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))' "$tmp/promptforge.vsix")
for f in extension.vsixmanifest extension/package.json extension/dist/extension.js extension/syntaxes/promptforge.injection.tmLanguage.json; do
  if ! grep -q "$f" <<<"$listing"; then
    echo "vsix lacks $f"; exit 1
  fi
done
echo "vsix ok: $(du -h "$tmp/promptforge.vsix" | cut -f1)"

echo "== Neovim headless test"
cd "$root"
# Neovim's own messages (progress echoes) go to stderr; shown only on failure.
status=0
FORGE_CASSETTE="$FORGE_CASSETTE_OUT" timeout 300 nvim --headless -u NONE -i NONE \
  --cmd "set rtp^=$root/editors/neovim" \
  -c "lua local ok, err = pcall(dofile, '$root/editors/neovim/test/headless.lua'); if not ok then io.stdout:write('not ok - headless.lua crashed: ' .. tostring(err) .. '\\n0 passed, 1 failed\\n'); vim.cmd('cquit 2') end" \
  2>"$tmp/nvim-stderr.log" || status=$?
if [ "$status" != 0 ]; then
  echo "Neovim test failed (exit $status); its stderr:"; cat "$tmp/nvim-stderr.log"; exit 1
fi
echo "== editors passed"
