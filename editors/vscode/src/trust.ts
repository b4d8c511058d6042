// Workspace Trust (docs/security.md#editors): in Restricted Mode the
// extension keeps diagnostics, hover and the other read-only features, and
// turns off everything that runs the workspace's prompts, tests or tools:
// runs, tests, debugging, and their code lenses.

import * as vscode from "vscode";

/** The server commands whose lenses run something. */
export const RUNNING_COMMANDS = new Set(["forge.runSection", "forge.runPrompt", "forge.runTest"]);

/** The message shown when a run, test or debug session is refused. */
export const RESTRICTED_MESSAGE =
  "PromptForge: runs, tests and debugging are off in Restricted Mode, since they may run commands from this workspace. Trust the workspace to use them.";

/** trusted reports whether the workspace is trusted (always, where the editor has no Workspace Trust). */
export function trusted(): boolean {
  return vscode.workspace.isTrusted !== false;
}

/** requireTrust shows RESTRICTED_MESSAGE and returns false in Restricted Mode. */
export function requireTrust(): boolean {
  if (trusted()) {
    return true;
  }
  void vscode.window.showWarningMessage(RESTRICTED_MESSAGE);
  return false;
}

/** keepLens drops the lenses that would run something while the workspace is not trusted. */
export function keepLens(command: string | undefined, isTrusted: boolean): boolean {
  return isTrusted || command === undefined || !RUNNING_COMMANDS.has(command);
}
