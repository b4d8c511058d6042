#!/usr/bin/env bash
# Installs forge-lsp for the GitHub Action (action.yml): the release archive
# for this runner's platform, verified against the release's checksums.txt,
# or a build from the action's own source.
#
# Environment:
#   FORGE_LSP_VERSION   latest (default), a version such as 0.2.0 or v0.2.0,
#                       or "build" to compile the action's checkout with Go
#   FORGE_LSP_RELEASES  where releases are downloaded from (default:
#                       https://github.com/forge-lsp/forge-lsp/releases);
#                       download/vV/NAME is appended. file:// works too.
#   FORGE_LSP_SOURCE    the source tree for "build" (default: this script's
#                       repository)
#   INSTALL_DIR         where the binary goes (default: $RUNNER_TEMP/forge-lsp-bin)
#   GITHUB_PATH         when set, INSTALL_DIR is added to it for later steps
set -euo pipefail

version=${FORGE_LSP_VERSION:-latest}
releases=${FORGE_LSP_RELEASES:-https://github.com/forge-lsp/forge-lsp/releases}
dir=${INSTALL_DIR:-${RUNNER_TEMP:-/tmp}/forge-lsp-bin}
mkdir -p "$dir"

die() { echo "forge-lsp action: $*" >&2; exit 1; }

case "$(uname -s)" in
  Linux) os=linux ;;
  Darwin) os=darwin ;;
  MINGW* | MSYS* | CYGWIN* | Windows_NT) os=windows ;;
  *) die "unsupported runner OS $(uname -s); set version: build to compile forge-lsp with Go" ;;
esac
case "$(uname -m)" in
  x86_64 | amd64) arch=amd64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) die "unsupported runner architecture $(uname -m); set version: build to compile forge-lsp with Go" ;;
esac
exe=forge-lsp
[ "$os" = windows ] && exe=forge-lsp.exe

if [ "$version" = build ]; then
  src=${FORGE_LSP_SOURCE:-$(cd "$(dirname "$0")/../.." && pwd)}
  command -v go >/dev/null 2>&1 || die "version: build needs Go on the runner (actions/setup-go)"
  (cd "$src" && CGO_ENABLED=0 go build -trimpath -o "$dir/$exe" ./cmd/forge-lsp)
else
  if [ "$version" = latest ]; then
    # The latest release's page redirects to its tag.
    url=$(curl -fsSLo /dev/null -w '%{url_effective}' "$releases/latest") || die "cannot find the latest release at $releases/latest"
    version=${url##*/}
  fi
  version=${version#v}
  case "$version" in
    '' | *[!0-9A-Za-z.+-]*) die "bad version '$version': use latest, build, or a release such as 0.2.0" ;;
  esac
  ext=tar.gz
  [ "$os" = windows ] && ext=zip
  name="forge-lsp_${version}_${os}_${arch}.$ext"
  base="$releases/download/v$version"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  curl -fsSL -o "$tmp/$name" "$base/$name" || die "cannot download $base/$name"
  curl -fsSL -o "$tmp/checksums.txt" "$base/checksums.txt" || die "cannot download $base/checksums.txt"
  want=$(awk -v n="$name" '$2 == n || $2 == "*" n { print $1 }' "$tmp/checksums.txt")
  [ -n "$want" ] || die "checksums.txt of v$version lists no $name"
  if command -v sha256sum >/dev/null 2>&1; then
    got=$(sha256sum "$tmp/$name" | awk '{print $1}')
  else
    got=$(shasum -a 256 "$tmp/$name" | awk '{print $1}')
  fi
  [ "$got" = "$want" ] || die "checksum mismatch for $name: got $got, checksums.txt says $want"
  if [ "$ext" = zip ]; then
    (cd "$tmp" && unzip -qo "$name" "$exe")
  else
    tar -xzf "$tmp/$name" -C "$tmp" "$exe" 2>/dev/null || tar -xzf "$tmp/$name" -C "$tmp" "./$exe"
  fi
  mv "$tmp/$exe" "$dir/$exe"
  chmod +x "$dir/$exe"
fi

"$dir/$exe" version | head -1
if [ -n "${GITHUB_PATH:-}" ]; then
  echo "$dir" >>"$GITHUB_PATH"
fi
