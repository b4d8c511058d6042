// The contributed commands and the configuration listener, wired to the
// controller's parts.

import * as vscode from "vscode";
import { CMD_RUN_PROMPT, CMD_RUN_SECTION, SERVER_RUN_PROMPT, SERVER_RUN_SECTION } from "./run";
import { CMD_SHOW_RENDERED } from "./render";

/** The operations behind the contributed commands. */
export interface CommandTarget {
  runSection(arg?: unknown): Promise<void>;
  runPrompt(arg?: unknown): Promise<void>;
  cancelRun(): void;
  showRenderedPrompt(arg?: unknown): Promise<void>;
  restart(): Promise<void>;
  showOutput(): void;
  setGatewayKey(): Promise<void>;
  onConfigurationChanged(e: vscode.ConfigurationChangeEvent): void;
}

/** registerCommands registers every contributed command and the configuration listener. */
export function registerCommands(t: CommandTarget): vscode.Disposable[] {
  const reg = (id: string, fn: (...args: unknown[]) => unknown) => vscode.commands.registerCommand(id, fn);
  return [
    reg(CMD_RUN_SECTION, (a) => t.runSection(a)),
    reg(CMD_RUN_PROMPT, (a) => t.runPrompt(a)),
    reg("promptforge.cancelRun", () => t.cancelRun()),
    reg(CMD_SHOW_RENDERED, (a) => t.showRenderedPrompt(a)),
    reg("promptforge.restartServer", () => t.restart()),
    reg("promptforge.showOutput", () => t.showOutput()),
    reg("promptforge.setGatewayKey", () => t.setGatewayKey()),
    vscode.workspace.onDidChangeConfiguration((e) => t.onConfigurationChanged(e)),
  ];
}

/**
 * rewriteLensCommand points the server's run lenses at this extension's
 * commands, which add the transcript, progress, cancellation and result tab
 * around the server's workspace/executeCommand.
 */
export function rewriteLensCommand(cmd: vscode.Command): vscode.Command {
  if (cmd.command === SERVER_RUN_SECTION) {
    return { ...cmd, command: CMD_RUN_SECTION };
  }
  if (cmd.command === SERVER_RUN_PROMPT) {
    return { ...cmd, command: CMD_RUN_PROMPT };
  }
  return cmd;
}
