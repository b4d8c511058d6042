// The status bar item: the server's state and version, a warning for an
// unexpected version, and the run in progress.

import * as vscode from "vscode";
import { EXPECTED_SERVER_VERSION, versionWarning } from "./probe";

/** Server state as shown in the status bar. */
export type ServerState = "stopped" | "starting" | "running" | "failed";

/** What the status bar shows. */
export interface StatusSnapshot {
  state: ServerState;
  version: string | undefined;
  problem: string | undefined;
  /** Label of the run in progress, if any. */
  running: string | undefined;
}

/** StatusView renders snapshots into one status bar item. */
export class StatusView implements vscode.Disposable {
  readonly item: vscode.StatusBarItem;

  constructor() {
    this.item = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 0);
    this.item.name = "PromptForge";
    this.item.command = "promptforge.showOutput";
  }

  show(): void {
    this.item.show();
  }

  render(s: StatusSnapshot): void {
    const item = this.item;
    const v = s.version ? ` ${s.version}` : "";
    item.backgroundColor = undefined;
    switch (s.state) {
      case "starting":
        item.text = "$(sync~spin) forge-lsp";
        item.tooltip = "PromptForge: starting the language server";
        break;
      case "running": {
        const warn = versionWarning(s.version);
        if (s.running !== undefined) {
          item.text = `$(play) forge-lsp${v}: running`;
          item.tooltip = `PromptForge: running ${s.running}`;
        } else if (warn) {
          item.text = `$(warning) forge-lsp${v}`;
          item.tooltip = warn;
          item.backgroundColor = new vscode.ThemeColor("statusBarItem.warningBackground");
        } else {
          item.text = `$(check) forge-lsp${v}`;
          item.tooltip = `PromptForge: forge-lsp${v} is running (expected ${EXPECTED_SERVER_VERSION})`;
        }
        break;
      }
      case "failed":
        item.text = "$(error) forge-lsp";
        item.tooltip = s.problem ?? "PromptForge: the language server failed";
        item.backgroundColor = new vscode.ThemeColor("statusBarItem.errorBackground");
        break;
      default:
        item.text = "$(circle-slash) forge-lsp";
        item.tooltip = "PromptForge: the language server is stopped";
    }
  }

  dispose(): void {
    this.item.dispose();
  }
}
