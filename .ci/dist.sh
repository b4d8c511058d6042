#!/usr/bin/env bash
# Builds a forge-lsp release as .ci/dist.env describes it: for every
# platform a binary with the release flags, packed with the docs into an
# archive (tar.gz, zip on Windows) in dist/, plus checksums.txt (SHA-256).
# Then it verifies what it built: the checksums, each archive's contents, and
# that the binary for this machine reports the version, commit and date.
#
#   .ci/dist.sh --dry-run [--version V]   build and verify only (CI, every push)
#   .ci/dist.sh --version V               also publish: create the GitHub
#                                         release vV with the archives (needs
#                                         gh and GH_TOKEN; the release workflow)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
# shellcheck source=.ci/dist.env
. .ci/dist.env
# Every key must be there: a missing one fails here, not halfway through.
: "${PROJECT:?}" "${MAIN:?}" "${PLATFORMS:?}" "${CGO_ENABLED:?}" "${BUILD_FLAGS:?}" "${LDFLAGS:?}" \
  "${ARCHIVE_NAME:?}" "${ARCHIVE_FORMAT:?}" "${ARCHIVE_FORMAT_WINDOWS:?}" "${ARCHIVE_FILES:?}" \
  "${CHECKSUMS:?}" "${CHECKSUM_ALGORITHM:?}"

dry_run=0 version=""
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) dry_run=1 ;;
    --version) version="${2:?--version needs a value}"; shift ;;
    *) echo "dist.sh: unknown argument $1 (use --dry-run and --version V)" >&2; exit 2 ;;
  esac
  shift
done
version="${version#v}"
if [ -z "$version" ]; then
  [ "$dry_run" = 1 ] || { echo "dist.sh: a release needs --version" >&2; exit 2; }
  version=0.0.0-dryrun
fi
commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
epoch=$(git log -1 --format=%ct 2>/dev/null || date +%s)
date=$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)

fill() {
  local s=$1
  s=${s//\{project\}/$PROJECT}; s=${s//\{version\}/$version}; s=${s//\{commit\}/$commit}; s=${s//\{date\}/$date}
  s=${s//\{os\}/${2:-}}; s=${s//\{arch\}/${3:-}}
  printf '%s' "$s"
}

rm -rf dist
mkdir -p dist/stage
ldflags=$(fill "$LDFLAGS")
# shellcheck disable=SC2086 # ARCHIVE_FILES is a list of globs
extra=$(ls -d $ARCHIVE_FILES)
for platform in $PLATFORMS; do
  goos=${platform%/*} goarch=${platform#*/}
  exe=$PROJECT; [ "$goos" = windows ] && exe=$PROJECT.exe
  stage="dist/stage/${goos}_$goarch"
  mkdir -p "$stage"
  start=$SECONDS
  # shellcheck disable=SC2086 # BUILD_FLAGS is a list of flags
  CGO_ENABLED=$CGO_ENABLED GOOS=$goos GOARCH=$goarch go build $BUILD_FLAGS -ldflags "$ldflags" -o "$stage/$exe" "$MAIN"
  for f in $extra; do
    mkdir -p "$stage/$(dirname "$f")"
    cp "$f" "$stage/$f"
  done
  name=$(fill "$ARCHIVE_NAME" "$goos" "$goarch")
  format=$ARCHIVE_FORMAT; [ "$goos" = windows ] && format=$ARCHIVE_FORMAT_WINDOWS
  case "$format" in
    tar.gz)
      tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" -C "$stage" -cf - . | gzip -n9 >"dist/$name.tar.gz" ;;
    zip)
      python3 - "$stage" "dist/$name.zip" "$epoch" <<'PY'
import os, sys, time, zipfile
src, out, epoch = sys.argv[1], sys.argv[2], int(sys.argv[3])
stamp = time.gmtime(epoch)[:6]
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    for root, dirs, files in os.walk(src):
        dirs.sort()
        for f in sorted(files):
            p = os.path.join(root, f)
            info = zipfile.ZipInfo(os.path.relpath(p, src), stamp)
            info.external_attr = (os.stat(p).st_mode & 0o777) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            with open(p, "rb") as fh:
                z.writestr(info, fh.read())
PY
      ;;
    *) echo "dist.sh: unknown archive format $format" >&2; exit 2 ;;
  esac
  echo "$platform: dist/$name.$format ($(( SECONDS - start )) s)"
done

[ "$CHECKSUM_ALGORITHM" = sha256 ] || { echo "dist.sh: only sha256 checksums are supported" >&2; exit 2; }
(cd dist && sha256sum -- *.tar.gz *.zip >"$CHECKSUMS")

echo "== verify"
(cd dist && sha256sum --quiet -c "$CHECKSUMS")
for platform in $PLATFORMS; do
  goos=${platform%/*} goarch=${platform#*/}
  exe=$PROJECT; [ "$goos" = windows ] && exe=$PROJECT.exe
  name=$(fill "$ARCHIVE_NAME" "$goos" "$goarch")
  if [ "$goos" = windows ]; then
    listing=$(python3 -c 'import sys,zipfile; print("\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))' "dist/$name.zip")
  else
    listing=$(tar -tzf "dist/$name.tar.gz" | sed 's|^\./||')
  fi
  for want in "$exe" README.md; do
    grep -qx "$want" <<<"$listing" || { echo "dist/$name lacks $want"; exit 1; }
  done
done
host="dist/stage/$(go env GOOS)_$(go env GOARCH)/$PROJECT"
[ "$(go env GOOS)" = windows ] && host=$host.exe
got=$("$host" version)
want="$PROJECT $version"$'\n'"commit $commit"$'\n'"built $date"
if [ "$(head -3 <<<"$got")" != "$want" ]; then
  echo "the built binary reports:"; echo "$got"; echo "want:"; echo "$want"; exit 1
fi
rm -rf dist/stage
echo "dist ok: $(cd dist && echo *)"

if [ "$dry_run" = 1 ]; then
  echo "dry run: would publish release v$version with the files above"
  exit 0
fi
gh release create "v$version" dist/* --verify-tag --title "forge-lsp $version" --generate-notes
