// The gateway key: kept in the editor's secret storage, never in settings,
// and handed to the server through its environment.

import * as vscode from "vscode";
import { GATEWAY_KEY_ENV, GATEWAY_KEY_SECRET } from "./config";

/** GatewayKey reads and asks for the key the server gets as GATEWAY_KEY_ENV. */
export class GatewayKey {
  constructor(private readonly secrets: vscode.SecretStorage) {}

  get(): Thenable<string | undefined> {
    return this.secrets.get(GATEWAY_KEY_SECRET);
  }

  /**
   * ask asks for the key and stores it (or removes it when the answer is
   * empty). It returns false when the user dismissed the question.
   */
  async ask(): Promise<boolean> {
    const key = await vscode.window.showInputBox({
      title: "PromptForge: Set Gateway Key",
      prompt: `The key is kept in the editor's secret storage and given to forge-lsp as ${GATEWAY_KEY_ENV}. Leave empty to remove it.`,
      password: true,
      ignoreFocusOut: true,
    });
    if (key === undefined) {
      return false;
    }
    if (key.trim() === "") {
      await this.secrets.delete(GATEWAY_KEY_SECRET);
      void vscode.window.showInformationMessage("PromptForge: gateway key removed.");
    } else {
      await this.secrets.store(GATEWAY_KEY_SECRET, key.trim());
      void vscode.window.showInformationMessage("PromptForge: gateway key stored; restarting the server.");
    }
    return true;
  }
}
