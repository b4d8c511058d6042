#!/usr/bin/env bash
# The GitHub Action's review step (action.yml, review: true): on a pull
# request, renders every prompt the pull request changed at its base and
# head (`forge-lsp render --diff BASE`, docs/review.md) and writes the
# rounds that change, with the token and cost table, as the job summary.
# Given a token, it also keeps one comment on the pull request up to date
# (found again by a hidden marker). Outside a pull request it does nothing.
#
# Environment: FORGE_LSP (default forge-lsp), REVIEW_PATHS (default .),
# GATEWAY_CONFIG (a gateway file for model bindings and prices; optional),
# GITHUB_EVENT_PATH (the pull_request event: base.sha and the number),
# GITHUB_STEP_SUMMARY, and for the comment GITHUB_TOKEN, GITHUB_REPOSITORY
# and GITHUB_API_URL (default https://api.github.com).
set -uo pipefail
bin=${FORGE_LSP:-forge-lsp}
marker="<!-- forge-lsp review -->"
event=${GITHUB_EVENT_PATH:-}
if [ -z "$event" ] || [ ! -f "$event" ]; then
  echo "forge-lsp review: no event payload; nothing to review"
  exit 0
fi
read -r base number < <(python3 -c '
import json, sys
e = json.load(open(sys.argv[1]))
pr = e.get("pull_request") or {}
print((pr.get("base") or {}).get("sha", ""), pr.get("number", e.get("number", "")))' "$event")
if [ -z "${base:-}" ]; then
  echo "forge-lsp review: not a pull request; nothing to review"
  exit 0
fi
# A shallow checkout lacks the base commit: fetch it alone.
if ! git cat-file -e "$base^{commit}" 2>/dev/null; then
  git fetch --no-tags --depth=1 origin "$base" >/dev/null 2>&1 ||
    { echo "::error title=forge-lsp review::cannot fetch the base commit $base (check out with fetch-depth: 0)"; exit 1; }
fi
read -r -a paths <<<"${REVIEW_PATHS:-.}"
args=(render --diff "$base" --format markdown)
[ -n "${GATEWAY_CONFIG:-}" ] && args+=(--gateway-config "$GATEWAY_CONFIG")
md=$(mktemp)
trap 'rm -f "$md" "$md.json"' EXIT
"$bin" "${args[@]}" -- "${paths[@]}" >"$md"
code=$?
if [ "$code" != 0 ]; then
  echo "::warning title=forge-lsp review::forge-lsp render --diff exited $code; the summary may be incomplete"
fi
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  cat "$md" >>"$GITHUB_STEP_SUMMARY"
fi
cat "$md"
if [ -n "${GITHUB_TOKEN:-}" ] && [ -n "${GITHUB_REPOSITORY:-}" ] && [ -n "$number" ]; then
  api=${GITHUB_API_URL:-https://api.github.com}
  python3 - "$api" "$GITHUB_REPOSITORY" "$number" "$md" "$marker" <<'PY' || echo "::warning title=forge-lsp review::could not update the pull request comment"
import json, os, sys, urllib.request
api, repo, number, path, marker = sys.argv[1:6]
body = marker + "\n" + open(path, encoding="utf-8").read()
headers = {"Authorization": "Bearer " + os.environ["GITHUB_TOKEN"], "Accept": "application/vnd.github+json",
           "Content-Type": "application/json", "User-Agent": "forge-lsp-review"}
def call(method, url, data=None):
    req = urllib.request.Request(url, method=method, headers=headers,
                                 data=None if data is None else json.dumps(data).encode())
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.load(r)
existing = None
page = 1
while existing is None:
    comments = call("GET", f"{api}/repos/{repo}/issues/{number}/comments?per_page=100&page={page}")
    existing = next((c for c in comments if marker in (c.get("body") or "")), None)
    if len(comments) < 100:
        break
    page += 1
if existing:
    call("PATCH", f"{api}/repos/{repo}/issues/comments/{existing['id']}", {"body": body})
    print("forge-lsp review: updated comment", existing["id"])
else:
    c = call("POST", f"{api}/repos/{repo}/issues/{number}/comments", {"body": body})
    print("forge-lsp review: posted comment", c.get("id"))
PY
fi
exit 0
