// Logic of the `promptforge` debugger that does not need the `vscode`
// module: the debug type, filling a launch configuration in, and the
// "Debug section" lenses added beside the server's "Run section" ones.

import * as path from "node:path";
import { isRunArgs, LensLike, SERVER_RUN_SECTION } from "./run";

/** The debug type contributed in package.json. */
export const DEBUG_TYPE = "promptforge";
/** The command behind the "Debug section" lens. */
export const CMD_DEBUG_SECTION = "promptforge.debugSection";

/** The launch keys forge-lsp dap reads (docs/debugging.md). */
export interface LaunchConfig {
  type: string;
  request: string;
  name: string;
  program?: string;
  input?: string;
  section?: string;
  store?: string;
  replay?: string;
  record?: string;
  gateway?: string;
  execution?: string;
  stopOnEntry?: boolean;
  trace?: string;
  noDebug?: boolean;
  [key: string]: unknown;
}

/** What the editor knows when a configuration is resolved. */
export interface LaunchContext {
  /** Path of the Markdown file in the active editor, if any. */
  activeFile?: string;
  /** First workspace folder, for relative paths. */
  root?: string;
  /** The promptforge.gateway.url setting. */
  gatewayUrl?: string;
  /** Where to put the trace of a session that did not ask for one. */
  traceFile?: () => string;
}

/** The outcome: a configuration to start, or why none can be. */
export type Resolved = { ok: true; config: LaunchConfig } | { ok: false; message: string };

/**
 * resolveLaunch fills a launch configuration in. An empty one (F5 with no
 * launch.json) becomes "debug the active prompt"; a missing program is the
 * active file; relative paths are resolved against the workspace root; the
 * gateway setting is used when the configuration names none; and every
 * session writes a trace so the run-trace view can show it afterwards.
 */
export function resolveLaunch(cfg: Partial<LaunchConfig>, ctx: LaunchContext): Resolved {
  const out: LaunchConfig = { ...cfg, type: cfg.type || DEBUG_TYPE, request: cfg.request || "launch", name: cfg.name || "Debug prompt" };
  if (out.request !== "launch") {
    return { ok: false, message: `the promptforge debugger only launches (request "${out.request}" is not supported)` };
  }
  if (!out.program) {
    if (!ctx.activeFile) {
      return { ok: false, message: "open a prompt (a Markdown file) to debug, or set \"program\" in the launch configuration" };
    }
    out.program = ctx.activeFile;
  }
  for (const k of ["program", "store", "replay", "record", "trace"] as const) {
    const v = out[k];
    // "${file}" and friends are substituted by VS Code after this and are absolute.
    if (typeof v === "string" && v !== "" && !v.startsWith("${") && !path.isAbsolute(v) && ctx.root) {
      out[k] = path.join(ctx.root, v);
    }
  }
  if (!out.gateway && !out.replay && ctx.gatewayUrl) {
    out.gateway = ctx.gatewayUrl;
  }
  if (!out.trace && ctx.traceFile) {
    out.trace = ctx.traceFile();
  }
  return { ok: true, config: out };
}

/** sectionConfig is the configuration of "Debug section" for one section. */
export function sectionConfig(file: string, section: string | undefined, input?: string): LaunchConfig {
  const cfg: LaunchConfig = {
    type: DEBUG_TYPE,
    request: "launch",
    name: section ? `Debug ${section}` : "Debug prompt",
    program: file,
    stopOnEntry: false,
  };
  if (section) {
    cfg.section = section;
  }
  if (input !== undefined) {
    cfg.input = input;
  }
  return cfg;
}

/**
 * debugLenses returns a "Debug section" lens for every "Run section" lens
 * of the server, on the same range and with the same arguments.
 */
export function debugLenses<L extends LensLike>(lenses: readonly L[], make: (from: L, command: { title: string; command: string; arguments: unknown[] }) => L): L[] {
  const out: L[] = [];
  for (const l of lenses) {
    const c = l.command;
    if (!c || (c.command !== SERVER_RUN_SECTION && c.command !== "promptforge.runSection")) {
      continue;
    }
    const a = c.arguments?.[0];
    if (!isRunArgs(a)) {
      continue;
    }
    out.push(make(l, { title: "⏵ Debug section", command: CMD_DEBUG_SECTION, arguments: [a] }));
  }
  return out;
}
