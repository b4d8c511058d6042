#!/usr/bin/env bash
# Release checks, run by .ci/run on every push: the release script's dry run
# (cross-builds the six platforms with the release flags, packs the archives,
# writes and verifies checksums.txt, runs the host binary's `version`), and
# actionlint, pinned and run with `go run`, on the release workflow.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

ACTIONLINT=github.com/rhysd/actionlint/cmd/actionlint@v1.7.12

echo "== release dry run (.ci/dist.sh --dry-run)"
bash .ci/dist.sh --dry-run
echo "== the GitHub Action's steps, run here (.ci/action.sh)"
bash .ci/action.sh
rm -rf dist

echo "== actionlint ($ACTIONLINT)"
# With shellcheck present actionlint also checks the workflows' run: scripts.
if ! command -v shellcheck >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  (DEBIAN_FRONTEND=noninteractive apt-get install -y -qq shellcheck >/dev/null 2>&1 ||
    { DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq shellcheck >/dev/null; }) ||
    echo "(shellcheck could not be installed; actionlint runs without it)"
fi
go run "$ACTIONLINT" -no-color -oneline .github/workflows/*.yml
if command -v shellcheck >/dev/null 2>&1; then
  shellcheck -x .ci/dist.sh .ci/release.sh .ci/editors.sh .ci/action.sh .ci/vscode-e2e.sh .github/action/*.sh
fi
echo "workflows ok"
