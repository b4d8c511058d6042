#!/usr/bin/env bash
# Runs the GitHub Action's shell steps (action.yml, .github/action/*.sh) here
# as the runner would, against the archives .ci/dist.sh built in dist/:
# install from a release (file:// base) with checksum verification, refuse a
# tampered archive, install by building from source, check the examples
# (SARIF written, exit recorded), check a prompt with an error (exit 1
# recorded, the step itself succeeds), and run the example tests as JUnit,
# whole and sharded, then three times each against the committed baseline
# with the comparison in the job summary, and review a fixture pull request
# (render --diff as the job summary, one comment posted then updated through
# a stand-in for the GitHub API). Called by .ci/release.sh after the dry run.
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
GITHUB_OUTPUT="$tmp/out3" TEST_PATHS="examples" JUNIT_FILE="$tmp/junit.xml" RESULTS_FILE="$tmp/r3.json" bash .github/action/test.sh
grep -q "<testsuites" "$tmp/junit.xml" || fail "no JUnit report"
whole=$(grep -c "<testcase " "$tmp/junit.xml")
parts=0
for s in 1/2 2/2; do
  out="$tmp/junit-${s%/*}.xml"
  SHARD=$s TEST_PATHS="examples" JUNIT_FILE="$out" RESULTS_FILE="" bash "$root/.github/action/test.sh" >/dev/null 2>&1 ||
    fail "shard $s failed"
  parts=$((parts + $(grep -c "<testcase " "$out")))
done
[ "$parts" = "$whole" ] || fail "the shards ran $parts cases, the whole suite $whole"
echo "== action test: results, the committed baseline, the job summary"
: >"$tmp/out4"
: >"$tmp/summary.md"
GITHUB_OUTPUT="$tmp/out4" GITHUB_STEP_SUMMARY="$tmp/summary.md" TEST_PATHS="examples" JUNIT_FILE="$tmp/j4.xml" \
  REPEAT=3 RESULTS_FILE="$tmp/results.json" BASELINE="examples/baseline.json" bash .github/action/test.sh ||
  fail "the examples regressed against examples/baseline.json"
grep -qx "results=$tmp/results.json" "$tmp/out4" || fail "no results output: $(cat "$tmp/out4")"
grep -q "#### Against the baseline" "$tmp/summary.md" || fail "no comparison in the job summary: $(cat "$tmp/summary.md")"
grep -q "no changes (13 cases compared)" "$tmp/summary.md" || fail "the examples differ from their baseline: $(cat "$tmp/summary.md")"
# A baseline whose runs used half the tokens: the summary shows the change,
# and the step still succeeds (only regressions and rate drops fail it).
python3 - "$tmp/results.json" "$tmp/cheaper.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for c in d["cases"]:
    if c["usage"]:
        c["input_tokens"] /= 2
json.dump(d, open(sys.argv[2], "w"))
PY
: >"$tmp/summary2.md"
GITHUB_STEP_SUMMARY="$tmp/summary2.md" TEST_PATHS="examples" JUNIT_FILE="$tmp/j5.xml" REPEAT=3 RESULTS_FILE="" \
  BASELINE="$tmp/cheaper.json" bash .github/action/test.sh >/dev/null 2>&1 || fail "token changes failed the step"
grep -q "⚠️ tokens" "$tmp/summary2.md" || fail "the token changes are not in the job summary: $(cat "$tmp/summary2.md")"
# A missing baseline (the first run) is a notice, not a failure.
out=$(TEST_PATHS="examples" JUNIT_FILE="$tmp/j6.xml" RESULTS_FILE="" BASELINE="$tmp/none.json" bash .github/action/test.sh 2>&1) ||
  fail "a missing baseline failed the step: $out"
grep -q "::notice title=forge-lsp test::no baseline at" <<<"$out" || fail "no notice for a missing baseline: $out"

echo "== action review: a fixture pull request, the job summary and one updated comment"
pr="$tmp/pr"
mkdir -p "$pr/prompts"
git_pr() { git -C "$pr" -c user.name=ci -c user.email=ci@example.com "$@"; }
git_pr init -q -b main
cp examples/topics.md examples/research.md "$pr/prompts/"
git_pr add -A && git_pr commit -q -m base
base_sha=$(git_pr rev-parse HEAD)
sed -i 's/Write two plain sentences about/Write one short, friendly paragraph about/' "$pr/prompts/topics.md"
sed -i 's/Search the web for current information/Search the web for recent, reliable sources/' "$pr/prompts/research.md"
git_pr commit -q -a -m head
printf '{"pull_request":{"number":7,"base":{"sha":"%s"}}}' "$base_sha" >"$tmp/event.json"
# A stand-in for the GitHub API: it keeps the issue's comments and logs
# each call.
cat >"$tmp/api.py" <<'PY'
import json, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
comments, log = [], open(sys.argv[2], "a")
class H(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def reply(self, obj):
        b = json.dumps(obj).encode()
        self.send_response(200); self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(b))); self.end_headers(); self.wfile.write(b)
    def body(self): return json.loads(self.rfile.read(int(self.headers["Content-Length"])))
    def do_GET(self):
        log.write("GET %s %s\n" % (self.path.split("?")[0], self.headers["Authorization"])); log.flush()
        self.reply(comments)
    def do_POST(self):
        c = {"id": len(comments) + 1, "body": self.body()["body"]}; comments.append(c)
        log.write("POST %s\n" % self.path); log.flush(); self.reply(c)
    def do_PATCH(self):
        cid = int(self.path.rsplit("/", 1)[1]); comments[cid - 1]["body"] = self.body()["body"]
        log.write("PATCH %s %d\n" % (self.path, len(comments))); log.flush(); self.reply(comments[cid - 1])
s = HTTPServer(("127.0.0.1", 0), H)
open(sys.argv[1] + ".tmp", "w").write(str(s.server_address[1]))
import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
s.serve_forever()
PY
python3 "$tmp/api.py" "$tmp/api.port" "$tmp/api.log" &
api_pid=$!
for _ in $(seq 1 300); do [ -s "$tmp/api.port" ] && break; sleep 0.1; done
[ -s "$tmp/api.port" ] || { kill "$api_pid"; fail "the API stand-in did not start"; }
review() {
  (cd "$pr" && GITHUB_EVENT_PATH="$tmp/event.json" GITHUB_STEP_SUMMARY="$1" REVIEW_PATHS="prompts" \
    GITHUB_TOKEN=t0ken GITHUB_REPOSITORY=o/r GITHUB_API_URL="http://127.0.0.1:$(cat "$tmp/api.port")" \
    bash "$root/.github/action/review.sh" >/dev/null)
}
: >"$tmp/review1.md"
review "$tmp/review1.md" || { kill "$api_pid"; fail "the review step failed"; }
review "$tmp/review2.md" || { kill "$api_pid"; fail "the second review failed"; }
kill "$api_pid"
s=$(cat "$tmp/review1.md")
grep -q "^## What the model sees: prompt changes" <<<"$s" || fail "review: no summary heading: $s"
# shellcheck disable=SC2016 # the backticks are Markdown code spans in the summary
grep -q '^| `prompts/topics.md` | modified | 3 of 3 |' <<<"$s" || fail "review: topics.md's three arms are not reported: $s"
# shellcheck disable=SC2016 # the backticks are Markdown code spans in the summary
grep -q '^| `prompts/research.md` | modified | 1 of 1 |' <<<"$s" || fail "review: research.md's round is not reported: $s"
grep -qF 'Write [-two plain sentences-]{+one short, friendly paragraph+} about pricing' <<<"$s" || fail "review: no word diff: $s"
grep -qF 'tool search description: Search the web for [-current information-]{+recent, reliable sources+}' <<<"$s" ||
  fail "review: the changed tool description is not reported: $s"
grep -qE '^\| \*\*run\*\* \| 53 → 5[0-9] \(\+[0-9]+\)' <<<"$s" || fail "review: no run token change for topics.md: $s"
grep -q "^POST /repos/o/r/issues/7/comments" "$tmp/api.log" || fail "review: no comment posted: $(cat "$tmp/api.log")"
grep -q "^PATCH /repos/o/r/issues/comments/1 1" "$tmp/api.log" || fail "review: the comment was not updated in place: $(cat "$tmp/api.log")"
grep -q "^GET /repos/o/r/issues/7/comments Bearer t0ken" "$tmp/api.log" || fail "review: the token was not sent: $(cat "$tmp/api.log")"

echo "action ok ($whole cases; shards add up; baseline compared; review summary and comment checked)"
