#!/usr/bin/env bash
# The GitHub Action's test step (action.yml): runs `forge-lsp test` offline
# from the committed cassettes on TEST_PATHS, the report in the log and JUnit
# XML in JUNIT_FILE, optionally one part of a sharded suite (SHARD, I/N).
# With JUNIT_FILE empty the failures become workflow annotations instead
# (--format github). Exits with forge-lsp's status.
#
# Environment: FORGE_LSP (default forge-lsp), TEST_PATHS (default .), SHARD,
# JUNIT_FILE, GITHUB_OUTPUT.
set -uo pipefail
bin=${FORGE_LSP:-forge-lsp}
read -r -a paths <<<"${TEST_PATHS:-.}"
[ ${#paths[@]} -gt 0 ] || paths=(.)
junit=${JUNIT_FILE-forge-lsp-junit.xml}
shard=()
[ -n "${SHARD:-}" ] && shard=(--shard "$SHARD")

# ${a[@]+"${a[@]}"}: an empty array under set -u on macOS's bash 3.2.
if [ -z "$junit" ]; then
  "$bin" test --format github ${shard[@]+"${shard[@]}"} "${paths[@]}"
  exit $?
fi
"$bin" test --format junit ${shard[@]+"${shard[@]}"} "${paths[@]}" >"$junit"
code=$?
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  echo "junit=$junit" >>"$GITHUB_OUTPUT"
fi
echo "forge-lsp test: exit $code, JUnit XML in $junit"
exit "$code"
