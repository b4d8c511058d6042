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

/** CMD_DEBUG_SECTION is the command of the "Debug section" code lens. */
export const CMD_DEBUG_SECTION = "promptforge.debugSection";

/** The server's run-section lens command, which the debug lens sits beside. */
const SERVER_RUN_SECTION = "forge.runSection";

/** DebugSectionArgs is the argument of CMD_DEBUG_SECTION. */
export interface DebugSectionArgs {
  uri: string;
  section: string;
}

/**
 * debugLensCommand returns the command of a "Debug section" lens for a
 * server lens that runs a section, undefined for other lenses.
 */
export function debugLensCommand(lens: { command?: { title?: string; command: string; arguments?: unknown[] } }):
  { title: string; command: string; arguments: [DebugSectionArgs] } | undefined {
  if (lens.command?.command !== SERVER_RUN_SECTION) {
    return undefined;
  }
  const a = lens.command.arguments?.[0] as { uri?: unknown; section?: unknown } | undefined;
  if (!a || typeof a.uri !== "string" || typeof a.section !== "string" || a.section === "") {
    return undefined;
  }
  return { title: "$(debug-alt) Debug section", command: CMD_DEBUG_SECTION, arguments: [{ uri: a.uri, section: a.section }] };
}

/** launchForSection is the launch configuration of "Debug section": it stops at the section's entry. */
export function launchForSection(a: DebugSectionArgs, program: string): LaunchConfig {
  return { type: DEBUG_TYPE, request: "launch", name: `Debug ${a.section}`, program, section: a.section, stopOnEntry: true };
}
