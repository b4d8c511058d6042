#!/usr/bin/env bash
# The GitHub Action's check step (action.yml): runs `forge-lsp check` on
# PATHS, the findings as text in the log and as SARIF in SARIF_FILE, and
# records the exit status as the step output `exit-code` instead of failing,
# so that the SARIF upload runs before the action fails.
#
# Environment: FORGE_LSP (the binary, default forge-lsp), PATHS (whitespace-
# separated, default .), FAIL_ON (error or warning), SARIF_FILE, GITHUB_OUTPUT.
set -uo pipefail
bin=${FORGE_LSP:-forge-lsp}
read -r -a paths <<<"${PATHS:-.}"
[ ${#paths[@]} -gt 0 ] || paths=(.)
sarif=${SARIF_FILE:-forge-lsp.sarif}

"$bin" check --fail-on "${FAIL_ON:-error}" "${paths[@]}"
code=$?
if [ "$code" -ge 2 ]; then
  echo "forge-lsp action: check could not run (exit $code)" >&2
fi
"$bin" check --format sarif --fail-on "${FAIL_ON:-error}" "${paths[@]}" >"$sarif"
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  { echo "exit-code=$code"; echo "sarif=$sarif"; } >>"$GITHUB_OUTPUT"
fi
echo "forge-lsp check: exit $code, SARIF in $sarif"
exit 0
