// The `promptforge` debugger: VS Code starts `forge-lsp dap` (the same
// binary as the language server) as a Debug Adapter Protocol executable.
// F5 on a prompt without a launch.json debugs the active file.

import * as vscode from "vscode";
import { adapterEnv, readSettings, userGetter } from "./config";
import { sessionTrace } from "./traceview";
import { requireTrust } from "./trust";
import { editReply, replyTarget, rerunSection, VariableContext } from "./whatif";
import { CMD_DEBUG_SECTION, DEBUG_TYPE, DebugSectionArgs, debugLensCommand, LaunchConfig, launchForSection, resolveLaunch } from "./launch";

/** The what-if commands of the Call Stack and Variables context menus. */
export const CMD_RERUN_SECTION = "promptforge.debug.rerunSection";
export const CMD_EDIT_REPLY = "promptforge.debug.editReply";

/** debugLenses returns a "Debug section" lens beside each of the server's "Run section" lenses. */
export function debugLenses(lenses: readonly vscode.CodeLens[]): vscode.CodeLens[] {
  const out: vscode.CodeLens[] = [];
  for (const l of lenses) {
    const c = debugLensCommand(l);
    if (c) {
      out.push(new vscode.CodeLens(l.range, c));
    }
  }
  return out;
}

/** activeFrame is the frame selected in the Call Stack, if any. */
function activeFrame(): number | undefined {
  const item = (vscode.debug as { activeStackItem?: { frameId?: number } }).activeStackItem;
  return item?.frameId;
}

/** whatIf runs a what-if action on the active promptforge session, showing failures. */
async function whatIf(f: (s: vscode.DebugSession) => Promise<void>): Promise<void> {
  const s = vscode.debug.activeDebugSession;
  try {
    if (!s || s.type !== DEBUG_TYPE) {
      throw new Error("PromptForge: no PromptForge debug session is stopped");
    }
    await f(s);
  } catch (e) {
    void vscode.window.showErrorMessage(e instanceof Error ? e.message : String(e));
  }
}

/** registerDebugger wires the debugger to the server binary chosen by the controller. */
export function registerDebugger(ctx: vscode.ExtensionContext, serverCommand: () => string | undefined): void {
  ctx.subscriptions.push(
    vscode.commands.registerCommand(CMD_RERUN_SECTION, (item?: { frameId?: number }) =>
      whatIf((s) => rerunSection(s, item?.frameId ?? activeFrame())),
    ),
    vscode.commands.registerCommand(CMD_EDIT_REPLY, (v?: VariableContext) =>
      whatIf(async (s) => {
        const { current } = replyTarget(v);
        const text = await vscode.window.showInputBox({ title: "Edit the model's reply", prompt: "The rest of the section runs again with this reply", value: current });
        if (text === undefined) {
          return;
        }
        await editReply(s, v, text, activeFrame());
      }),
    ),
    vscode.commands.registerCommand(CMD_DEBUG_SECTION, (a: DebugSectionArgs) => {
      if (!requireTrust()) {
        return false;
      }
      const uri = vscode.Uri.parse(a.uri);
      return vscode.debug.startDebugging(vscode.workspace.getWorkspaceFolder(uri), launchForSection(a, uri.fsPath) as vscode.DebugConfiguration);
    }),
    vscode.debug.registerDebugAdapterDescriptorFactory(DEBUG_TYPE, {
      createDebugAdapterDescriptor(): vscode.ProviderResult<vscode.DebugAdapterDescriptor> {
        const cfg = vscode.workspace.getConfiguration("promptforge");
        const env = adapterEnv(readSettings(userGetter(cfg)));
        return new vscode.DebugAdapterExecutable(serverCommand() ?? "forge-lsp", ["dap"], env ? { env } : undefined);
      },
    }),
    vscode.debug.registerDebugConfigurationProvider(DEBUG_TYPE, {
      resolveDebugConfiguration(_folder, config): vscode.ProviderResult<vscode.DebugConfiguration> {
        // launch.json is a workspace file: no debugging in Restricted Mode.
        if (!requireTrust()) {
          return undefined;
        }
        const editor = vscode.window.activeTextEditor;
        const active = editor && editor.document.languageId === "markdown" ? editor.document.uri.fsPath : undefined;
        const r = resolveLaunch(config as LaunchConfig, active);
        if (!r.config) {
          void vscode.window.showErrorMessage(r.problem ?? "PromptForge: nothing to debug");
          return undefined;
        }
        // Every session writes a trace, shown in the run-trace view when it ends.
        if (!r.config.trace) {
          r.config.trace = sessionTrace();
        }
        return r.config as vscode.DebugConfiguration;
      },
    }),
  );
}
