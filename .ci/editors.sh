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
if grep -q "extension/bin/" <<<"$listing"; then
  echo "the universal vsix carries a server binary"; exit 1
fi
# The universal package (no server) must stay small: 1 MB.
budget=1048576
size=$(stat -c %s "$tmp/promptforge.vsix")
echo "universal vsix: $size bytes (budget $budget)"
if [ "$size" -gt "$budget" ]; then
  echo "the universal .vsix is over its 1 MB budget"; exit 1
fi

echo "== VS Code extension: npm run package:platform -- linux-x64"
npm run --silent package:platform -- linux-x64 --out "$tmp/promptforge-linux-x64.vsix" </dev/null
# The platform package holds the server at extension/bin/forge-lsp with its
# execute bit, the server runs `version` and reports the extension's version,
# and everything but the server stays within the same 1 MB budget.
python3 - "$tmp/promptforge-linux-x64.vsix" "$tmp/bundled" "$budget" <<'PY'
import os, stat, sys, zipfile
vsix, out, budget = sys.argv[1], sys.argv[2], int(sys.argv[3])
z = zipfile.ZipFile(vsix)
names = z.namelist()
for need in ("extension/bin/forge-lsp", "extension/dist/extension.js", "extension/package.json"):
    if need not in names:
        sys.exit(f"{vsix} lacks {need}")
info = z.getinfo("extension/bin/forge-lsp")
if not (info.external_attr >> 16) & stat.S_IXUSR:
    sys.exit("extension/bin/forge-lsp is not executable in the package")
rest = sum(i.compress_size for i in z.infolist() if not i.filename.startswith("extension/bin/"))
print(f"linux-x64 vsix: {os.path.getsize(vsix)} bytes, {rest} bytes without the binary (budget {budget})")
if rest > budget:
    sys.exit("the .vsix without the binary is over its 1 MB budget")
os.makedirs(out, exist_ok=True)
z.extract("extension/bin/forge-lsp", out)
os.chmod(os.path.join(out, "extension/bin/forge-lsp"), 0o755)
PY
want=$(node -p 'require("./package.json").version')
got=$("$tmp/bundled/extension/bin/forge-lsp" version)
echo "bundled: $(head -1 <<<"$got")"
if [ "$(head -1 <<<"$got")" != "forge-lsp $want" ]; then
  echo "the bundled forge-lsp reports '$(head -1 <<<"$got")', want 'forge-lsp $want'"; exit 1
fi
if [ -e bin ]; then
  echo "package:platform left editors/vscode/bin behind"; exit 1
fi

# nvim_test TITLE FILE: runs editors/neovim/test/FILE headless against the
# binary; Neovim's own messages (progress echoes) go to stderr, shown only on
# failure.
nvim_test() {
  echo "== Neovim headless test$1"
  local status=0
  timeout 300 nvim --headless -u NONE -i NONE \
    --cmd "set rtp^=$root/editors/neovim" \
    -c "lua local ok, err = pcall(dofile, '$root/editors/neovim/test/$2'); if not ok then io.stdout:write('not ok - $2 crashed: ' .. tostring(err) .. '\\n0 passed, 1 failed\\n'); vim.cmd('cquit 2') end" \
    2>"$tmp/nvim-$2.stderr" || status=$?
  if [ "$status" != 0 ]; then
    echo "Neovim test $2 failed (exit $status); its stderr:"; cat "$tmp/nvim-$2.stderr"; exit 1
  fi
}

cd "$root"
# Each Neovim suite is self-contained: headless.lua replays the committed
# editors/testdata/model.cassette.jsonl.
nvim_test "" headless.lua
nvim_test ": incremental sync, semantic tokens, inlay hints, formatting" features.lua
nvim_test ": the nvim-dap adapter" dap.lua
echo "== VS Code extension in a real VS Code (code-server + Chromium)"
bash "$root/.ci/vscode-e2e.sh" "$FORGE_LSP_BIN" "$tmp/promptforge.vsix"
echo "== editors passed"
