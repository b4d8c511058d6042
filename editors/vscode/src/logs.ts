// The two output channels and the routing of the server's messages between
// them: the server log ("PromptForge") and a run's transcript
// ("PromptForge Run").

import * as vscode from "vscode";

/** The workDoneToken of the run in progress, or undefined between runs. */
export type ActiveRunToken = () => string | undefined;

/** Logs owns the output channels and routes window/logMessage and window/showMessage. */
export class Logs implements vscode.Disposable {
  readonly log: vscode.OutputChannel;
  readonly transcript: vscode.OutputChannel;

  constructor(private readonly activeRun: ActiveRunToken) {
    this.log = vscode.window.createOutputChannel("PromptForge");
    this.transcript = vscode.window.createOutputChannel("PromptForge Run");
  }

  showOutput(): void {
    this.log.show(true);
  }

  /**
   * onLogMessage routes the server's window/logMessage. The server tags a
   * run's transcript with "[forge run <workDoneToken>]": those lines go to the
   * transcript without the tag. Untagged messages during a run are taken as
   * transcript too; everything else is server log.
   */
  onLogMessage(type: number, message: string): void {
    const run = this.activeRun();
    const tag = /^\[forge run ([^\]]*)\] ?/.exec(message);
    if (run !== undefined && (!tag || tag[1] === run)) {
      this.transcript.appendLine(tag ? message.slice(tag[0].length) : message);
    } else {
      this.log.appendLine(`[${logTypeName(type)}] ${message}`);
    }
  }

  /**
   * onShowMessage shows the server's messages. During a run the server
   * announces the run's result or failure this way; the extension already
   * opens the result and reports failures itself, so those go to the
   * transcript instead of a second pop-up.
   */
  onShowMessage(type: number, message: string): void {
    if (this.activeRun() !== undefined) {
      this.transcript.appendLine(`[${logTypeName(type)}] ${message}`);
      return;
    }
    if (type === 1) {
      void vscode.window.showErrorMessage(message);
    } else if (type === 2) {
      void vscode.window.showWarningMessage(message);
    } else {
      void vscode.window.showInformationMessage(message);
    }
  }

  dispose(): void {
    this.log.dispose();
    this.transcript.dispose();
  }
}

function logTypeName(t: number): string {
  return ["", "error", "warning", "info", "log", "debug"][t] ?? "log";
}
