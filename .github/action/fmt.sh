#!/usr/bin/env bash
# The GitHub Action's fmt-check step (action.yml): runs `forge-lsp fmt
# --check --diff` on FMT_PATHS, so the log shows what is not formatted and
# each such file becomes a workflow annotation. Exits with forge-lsp's
# status (1: a file is not formatted; run `forge-lsp fmt -w` on it).
#
# Environment: FORGE_LSP (default forge-lsp), FMT_PATHS (default .).
set -uo pipefail
bin=${FORGE_LSP:-forge-lsp}
read -r -a paths <<<"${FMT_PATHS:-.}"
[ ${#paths[@]} -gt 0 ] || paths=(.)
out=$("$bin" fmt --check "${paths[@]}")
code=$?
if [ "$code" = 1 ]; then
  while IFS= read -r f; do
    [ -n "$f" ] && echo "::error file=$f,title=forge-lsp fmt::$f is not formatted; run forge-lsp fmt -w $f"
  done <<<"$out"
  "$bin" fmt --diff "${paths[@]}"
fi
echo "forge-lsp fmt --check: exit $code"
exit "$code"
