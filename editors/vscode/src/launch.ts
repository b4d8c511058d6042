// Completing a `promptforge` launch configuration (no vscode import, so
// that the tests run it under node).

/** DEBUG_TYPE is the debugger type contributed in package.json. */
export const DEBUG_TYPE = "promptforge";

/** LaunchConfig is the part of a launch configuration the extension fills in. */
export interface LaunchConfig {
  type?: string;
  request?: string;
  name?: string;
  program?: string;
  [key: string]: unknown;
}

/**
 * resolveLaunch completes a launch configuration: an empty one (F5 with no
 * launch.json) debugs the active prompt file, stopping on entry. It returns
 * undefined, with the reason, when there is nothing to debug.
 */
export function resolveLaunch(config: LaunchConfig, activeFile: string | undefined): { config?: LaunchConfig; problem?: string } {
  const c = { ...config };
  if (!c.type && !c.request && !c.name) {
    c.type = DEBUG_TYPE;
    c.request = "launch";
    c.name = "Debug prompt";
    c.stopOnEntry = true;
  }
  if (!c.program) {
    if (!activeFile) {
      return { problem: "PromptForge: open a prompt file, or set \"program\" in the launch configuration." };
    }
    c.program = activeFile;
  }
  return { config: c };
}
