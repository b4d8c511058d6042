#!/usr/bin/env bash
# Runs the GitHub Action's shell steps (action.yml, .github/action/*.sh) here
# as the runner would, against the archives .ci/dist.sh built in dist/:
# install from a release (file:// base) with checksum verification, refuse a
# tampered archive, install by building from source, check the examples
# (SARIF written, exit recorded), check a prompt with an error (exit 1
# recorded, the step itself succeeds), and run the example tests as JUnit,
# whole and sharded. Called by .ci/release.sh after the dry run.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
export PATH="$PATH:/usr/local/go/bin"
[ -f dist/checksums.txt ] || { echo "action.sh: run .ci/dist.sh --dry-run first"; exit 2; }
version=$(sed -n 's/^[0-9a-f]*  forge-lsp_\(.*\)_linux_amd64\.tar\.gz$/\1/p' dist/checksums.txt)
[ -n "$version" ] || { echo "action.sh: no linux/amd64 archive in dist/"; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "action.sh: $*"; exit 1; }

# A release laid out as GitHub serves it: download/vV/NAME.
mkdir -p "$tmp/releases/download/v$version"
cp dist/*.tar.gz dist/*.zip dist/checksums.txt "$tmp/releases/download/v$version/"

echo "== action install: release v$version (file://), checksum verified"
GITHUB_PATH="$tmp/github_path" INSTALL_DIR="$tmp/bin" FORGE_LSP_VERSION="v$version" \
  FORGE_LSP_RELEASES="file://$tmp/releases" bash .github/action/install.sh
[ "$(cat "$tmp/github_path")" = "$tmp/bin" ] || fail "install did not add its folder to GITHUB_PATH"
"$tmp/bin/forge-lsp" version | grep -qx "forge-lsp $version" || fail "installed binary is not v$version"

echo "== action install: a tampered archive is refused"
cp -r "$tmp/releases" "$tmp/bad"
printf 'x' >>"$tmp/bad/download/v$version/forge-lsp_${version}_linux_amd64.tar.gz"
if out=$(INSTALL_DIR="$tmp/badbin" FORGE_LSP_VERSION="$version" FORGE_LSP_RELEASES="file://$tmp/bad" \
  bash .github/action/install.sh 2>&1); then
  fail "a tampered archive was installed"
fi
grep -q "checksum mismatch" <<<"$out" || fail "tampered archive: unexpected message: $out"
[ ! -e "$tmp/badbin/forge-lsp" ] || fail "a tampered archive left a binary behind"

echo "== action install: version build"
INSTALL_DIR="$tmp/built" FORGE_LSP_VERSION=build bash .github/action/install.sh
[ -x "$tmp/built/forge-lsp" ] || fail "build left no binary"

export FORGE_LSP="$tmp/bin/forge-lsp"
echo "== action check: the examples"
: >"$tmp/out1"
GITHUB_OUTPUT="$tmp/out1" PATHS="examples" FAIL_ON=error SARIF_FILE="$tmp/ex.sarif" bash .github/action/check.sh
grep -qx "exit-code=0" "$tmp/out1" || fail "check of the examples: $(cat "$tmp/out1")"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["version"]=="2.1.0", d["version"]' "$tmp/ex.sarif" ||
  fail "the SARIF report is not SARIF 2.1.0"

echo "== action check: a prompt with an error"
mkdir -p "$tmp/bad-prompts"
# shellcheck disable=SC2016 # the backticks are the prompt's Lua fence
printf -- '---\npromptforge: 1\n---\n# Bad\n\n```lua\ntools.add_local("x", "d", function() end)\n```\n' >"$tmp/bad-prompts/bad.md"
: >"$tmp/out2"
GITHUB_OUTPUT="$tmp/out2" PATHS="$tmp/bad-prompts" SARIF_FILE="$tmp/bad.sarif" bash .github/action/check.sh >/dev/null ||
  fail "the check step itself failed; it must record the status and succeed"
grep -qx "exit-code=1" "$tmp/out2" || fail "check of a bad prompt: $(cat "$tmp/out2")"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["runs"][0]["results"], "no results"' "$tmp/bad.sarif" ||
  fail "the SARIF report of a bad prompt holds no result"

echo "== action fmt-check: the examples are formatted; an unformatted prompt fails, annotated"
FMT_PATHS="examples" bash .github/action/fmt.sh >/dev/null || fail "fmt-check of the examples failed"
mkdir -p "$tmp/unformatted"
# shellcheck disable=SC2016 # the backticks are the prompt's Lua fence
printf -- '---\nname: u\ndescription: d\npromptforge: 1\n---\n# U\n```lua\nif x then\nreturn 1\nend\n```\n' >"$tmp/unformatted/u.md"
if out=$(FMT_PATHS="$tmp/unformatted" bash .github/action/fmt.sh 2>&1); then
  fail "fmt-check passed an unformatted prompt"
fi
grep -q "::error file=$tmp/unformatted/u.md," <<<"$out" || fail "fmt-check: no annotation: $out"
grep -q "^+	return 1" <<<"$out" || fail "fmt-check: no diff in the log: $out"

echo "== action test: the examples, JUnit, whole and in two shards"
: >"$tmp/out3"
GITHUB_OUTPUT="$tmp/out3" TEST_PATHS="examples" JUNIT_FILE="$tmp/junit.xml" bash .github/action/test.sh
grep -q "<testsuites" "$tmp/junit.xml" || fail "no JUnit report"
whole=$(grep -c "<testcase " "$tmp/junit.xml")
parts=0
for s in 1/2 2/2; do
  out="$tmp/junit-${s%/*}.xml"
  SHARD=$s TEST_PATHS="examples" JUNIT_FILE="$out" bash "$root/.github/action/test.sh" >/dev/null 2>&1 ||
    fail "shard $s failed"
  parts=$((parts + $(grep -c "<testcase " "$out")))
done
[ "$parts" = "$whole" ] || fail "the shards ran $parts cases, the whole suite $whole"
echo "action ok ($whole cases; shards add up)"
