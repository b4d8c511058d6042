#!/usr/bin/env bash
# The GitHub Action's test step (action.yml): runs `forge-lsp test` offline
# from the committed cassettes on TEST_PATHS, the report in the log and JUnit
# XML in JUNIT_FILE, optionally one part of a sharded suite (SHARD, I/N).
# With JUNIT_FILE empty the failures become workflow annotations instead
# (--format github). REPEAT runs each case that many times from its recorded
# cassettes; the results go to RESULTS_FILE; BASELINE, when it names an
# existing results file, is compared with them (exit 1 on a regression or a
# rate drop), and the run and the comparison are appended to the job summary
# (GITHUB_STEP_SUMMARY) as Markdown. Exits with forge-lsp's status.
#
# Environment: FORGE_LSP (default forge-lsp), TEST_PATHS (default .), SHARD,
# JUNIT_FILE, REPEAT, RESULTS_FILE, BASELINE, GITHUB_OUTPUT,
# GITHUB_STEP_SUMMARY.
set -uo pipefail
bin=${FORGE_LSP:-forge-lsp}
read -r -a paths <<<"${TEST_PATHS:-.}"
[ ${#paths[@]} -gt 0 ] || paths=(.)
junit=${JUNIT_FILE-forge-lsp-junit.xml}
shard=()
[ -n "${SHARD:-}" ] && shard=(--shard "$SHARD")
[ -n "${REPEAT:-}" ] && [ "$REPEAT" != 1 ] && shard+=(--repeat "$REPEAT")
results=${RESULTS_FILE-forge-lsp-results.json}
[ -n "$results" ] && shard+=(--results "$results")
if [ -n "${BASELINE:-}" ]; then
  if [ -f "$BASELINE" ]; then
    shard+=(--baseline "$BASELINE")
  else
    echo "::notice title=forge-lsp test::no baseline at $BASELINE (the first run has none); the results are not compared"
  fi
fi
[ -n "${GITHUB_STEP_SUMMARY:-}" ] && shard+=(--summary "$GITHUB_STEP_SUMMARY")

# ${a[@]+"${a[@]}"}: an empty array under set -u on macOS's bash 3.2.
if [ -z "$junit" ]; then
  "$bin" test --format github ${shard[@]+"${shard[@]}"} "${paths[@]}"
  exit $?
fi
"$bin" test --format junit ${shard[@]+"${shard[@]}"} "${paths[@]}" >"$junit"
code=$?
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  echo "junit=$junit" >>"$GITHUB_OUTPUT"
  [ -n "$results" ] && echo "results=$results" >>"$GITHUB_OUTPUT"
fi
echo "forge-lsp test: exit $code, JUnit XML in $junit"
exit "$code"
