// The `promptforge` debugger: VS Code starts `forge-lsp dap` (the binary the
// extension resolved for the language server) as the debug adapter; F5 on a
// prompt debugs the active file; "Debug section" lenses sit beside the
// server's "Run section" ones. Every session writes a run trace, shown in
// the run-trace view when the session ends.

import * as vscode from "vscode";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { CMD_DEBUG_SECTION, DEBUG_TYPE, LaunchConfig, resolveLaunch, sectionConfig } from "./debugconfig";
import { isRunArgs } from "./run";

export interface DebugHooks {
  /** The resolved forge-lsp binary, undefined while none is. */
  binary(): string | undefined;
  /** The environment of the adapter (the gateway key included). */
  env(): Promise<NodeJS.ProcessEnv>;
  /** Called with the trace file of a session that ended. */
  onTrace(file: string): void;
}

let traceCounter = 0;
/** Trace files this extension chose; removed once shown. */
const tempTraces = new Set<string>();

/** A fresh trace file in the temporary folder for one session. */
function tempTrace(): string {
  traceCounter++;
  const file = path.join(os.tmpdir(), `promptforge-debug-${process.pid}-${traceCounter}.jsonl`);
  tempTraces.add(file);
  return file;
}

/** The adapter: `forge-lsp dap` over stdio. */
export class ForgeDebugAdapterFactory implements vscode.DebugAdapterDescriptorFactory {
  constructor(private readonly hooks: DebugHooks) {}

  async createDebugAdapterDescriptor(): Promise<vscode.DebugAdapterDescriptor> {
    const bin = this.hooks.binary();
    if (!bin) {
      throw new Error("PromptForge: no forge-lsp binary is running; see PromptForge: Show Output, or set promptforge.server.path");
    }
    return new vscode.DebugAdapterExecutable(bin, ["dap"], { env: toEnv(await this.hooks.env()) });
  }
}

function toEnv(env: NodeJS.ProcessEnv): { [key: string]: string } {
  const out: { [key: string]: string } = {};
  for (const [k, v] of Object.entries(env)) {
    if (v !== undefined) {
      out[k] = v;
    }
  }
  return out;
}

/** F5 on a prompt, and filling in what a launch.json entry leaves out. */
export class ForgeDebugConfigurationProvider implements vscode.DebugConfigurationProvider {
  provideDebugConfigurations(): vscode.DebugConfiguration[] {
    return [{ type: DEBUG_TYPE, request: "launch", name: "Debug prompt", program: "${file}", stopOnEntry: true }];
  }

  resolveDebugConfiguration(
    folder: vscode.WorkspaceFolder | undefined,
    cfg: vscode.DebugConfiguration,
  ): vscode.DebugConfiguration | undefined {
    const doc = vscode.window.activeTextEditor?.document;
    const active = doc && doc.languageId === "markdown" && doc.uri.scheme === "file" ? doc.uri.fsPath : undefined;
    const res = resolveLaunch(cfg as Partial<LaunchConfig>, {
      activeFile: active,
      root: folder?.uri.fsPath ?? vscode.workspace.workspaceFolders?.[0]?.uri.fsPath,
      gatewayUrl: vscode.workspace.getConfiguration("promptforge").get<string>("gateway.url") || undefined,
      traceFile: tempTrace,
    });
    if (!res.ok) {
      void vscode.window.showErrorMessage(`PromptForge: ${res.message}`);
      return undefined;
    }
    return res.config as vscode.DebugConfiguration;
  }
}

/**
 * debugSection starts a session for one section: from a lens (its RunArgs)
 * or, from the palette, the section under the cursor of the active prompt.
 */
export async function debugSection(arg?: unknown): Promise<boolean> {
  let file: string | undefined;
  let section: string | undefined;
  if (isRunArgs(arg)) {
    file = vscode.Uri.parse(arg.uri).fsPath;
    section = arg.section;
  } else {
    const ed = vscode.window.activeTextEditor;
    if (!ed || ed.document.languageId !== "markdown") {
      void vscode.window.showErrorMessage("PromptForge: open a prompt to debug a section.");
      return false;
    }
    file = ed.document.uri.fsPath;
    section = headingAbove(ed.document.getText().split("\n"), ed.selection.active.line);
  }
  const folder = vscode.workspace.getWorkspaceFolder?.(vscode.Uri.file(file));
  return vscode.debug.startDebugging(folder, sectionConfig(file, section) as vscode.DebugConfiguration);
}

/**
 * headingAbove is the address ("## Name") of the H2..H6 section holding
 * line (0-based), skipping fenced code; undefined in the preamble.
 */
export function headingAbove(lines: readonly string[], line: number): string | undefined {
  let fence: string | undefined;
  let found: string | undefined;
  for (let i = 0; i <= line && i < lines.length; i++) {
    const l = lines[i];
    const f = /^\s{0,3}(`{3,}|~{3,})/.exec(l);
    if (f) {
      if (!fence) {
        fence = f[1];
      } else if (f[1][0] === fence[0] && f[1].length >= fence.length) {
        fence = undefined;
      }
      continue;
    }
    if (fence) {
      continue;
    }
    const h = /^(#{2,6})\s+(.*?)\s*#*\s*$/.exec(l);
    if (h) {
      found = `${h[1]} ${h[2]}`;
    } else if (/^#\s/.test(l)) {
      found = undefined;
    }
  }
  return found;
}

/** registerDebugger wires the adapter, the configuration provider and the command. */
export function registerDebugger(hooks: DebugHooks): vscode.Disposable[] {
  return [
    vscode.debug.registerDebugAdapterDescriptorFactory(DEBUG_TYPE, new ForgeDebugAdapterFactory(hooks)),
    vscode.debug.registerDebugConfigurationProvider(DEBUG_TYPE, new ForgeDebugConfigurationProvider()),
    vscode.commands.registerCommand(CMD_DEBUG_SECTION, (a) => debugSection(a)),
    vscode.debug.onDidTerminateDebugSession((s) => {
      const trace = s.type === DEBUG_TYPE ? (s.configuration as LaunchConfig).trace : undefined;
      if (typeof trace === "string" && trace !== "" && fs.existsSync(trace)) {
        hooks.onTrace(trace);
        // The view keeps the parsed tree; a temporary trace is not needed after.
        if (tempTraces.delete(trace)) {
          fs.rmSync(trace, { force: true });
        }
      }
    }),
  ];
}
