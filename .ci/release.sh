#!/usr/bin/env bash
# Release checks, run by .ci/run on every push: cross-builds forge-lsp for
# the six release platforms, and validates the release workflow (actionlint)
# and the release configuration (goreleaser check), both run pinned with
# `go run` so that nothing is downloaded outside the Go module proxy.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

ACTIONLINT=github.com/rhysd/actionlint/cmd/actionlint@v1.7.12
GORELEASER=github.com/goreleaser/goreleaser/v2@v2.15.1

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "== cross-build forge-lsp for the release platforms"
for target in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64; do
  goos=${target%/*} goarch=${target#*/}
  ext=""; [ "$goos" = windows ] && ext=.exe
  out="$tmp/forge-lsp-$goos-$goarch$ext"
  start=$SECONDS
  CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch go build -trimpath -o "$out" ./cmd/forge-lsp
  echo "$target ok ($(( SECONDS - start )) s, $(du -h "$out" | cut -f1))"
done

echo "== actionlint ($ACTIONLINT)"
# With shellcheck present actionlint also checks the workflows' run: scripts.
if ! command -v shellcheck >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  (DEBIAN_FRONTEND=noninteractive apt-get install -y -qq shellcheck >/dev/null 2>&1 ||
    { DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq shellcheck >/dev/null; }) ||
    echo "(shellcheck could not be installed; actionlint runs without it)"
fi
go run "$ACTIONLINT" -no-color -oneline .github/workflows/*.yml
echo "workflows ok"

echo "== goreleaser check ($GORELEASER)"
go run "$GORELEASER" check
