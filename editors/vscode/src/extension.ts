// Entry point of the PromptForge extension.

import * as vscode from "vscode";
import { createLanguageClient } from "./client";
import { ForgeController } from "./controller";
import { registerDebugger } from "./debug";
import { ForgeTests } from "./testing";
import { registerTraceView } from "./traceview";

let controller: ForgeController | undefined;

/** activate starts forge-lsp for Markdown files and registers the commands. */
export async function activate(ctx: vscode.ExtensionContext): Promise<void> {
  controller = new ForgeController(ctx, createLanguageClient);
  ctx.subscriptions.push(controller);
  controller.registerCommands();
  await controller.start();
  // The Testing view lists every NAME.test.yaml case and runs it with the
  // same binary.
  const tests = new ForgeTests(() => controller?.serverCommand);
  ctx.subscriptions.push(tests);
  registerDebugger(ctx, () => controller?.serverCommand);
  // The run-trace view: a trace file's sections, model rounds and tool
  // calls; each debug session's trace opens there when it ends.
  ctx.subscriptions.push(...registerTraceView().disposables);
  // Granting Workspace Trust brings the run lenses back (Restricted Mode
  // drops them: trust.ts).
  const granted = vscode.workspace.onDidGrantWorkspaceTrust?.(() => void controller?.restart());
  if (granted) {
    ctx.subscriptions.push(granted);
  }
}

/** deactivate stops the server. */
export async function deactivate(): Promise<void> {
  await controller?.stop();
  controller = undefined;
}
