// Runs from the editor: Run Section, Run Prompt and Cancel Run. A run sends
// forge.runSection / forge.runPrompt with a workDoneToken, streams progress
// into a notification, and opens the result in a new tab.

import * as vscode from "vscode";
import { errorCode, errorMessage, REQUEST_CANCELLED } from "./errors";
import type { ResultDocuments } from "./results";
import type { ServerClient } from "./lifecycle";
import {
  isRunArgs,
  LensLike,
  progressLine,
  resultText,
  RunArgs,
  runLabel,
  sectionLensAt,
  SERVER_RUN_PROMPT,
  SERVER_RUN_SECTION,
} from "./run";

interface ActiveRun {
  args: RunArgs;
  cts: vscode.CancellationTokenSource;
  /** The workDoneToken sent with the run; the server tags its transcript with it. */
  token: string;
}

/** What a run needs from the rest of the extension. */
export interface RunnerHooks {
  transcript: vscode.OutputChannel;
  /** The running client, or undefined after telling the user why not. */
  requireClient(): ServerClient | undefined;
  /** Called when a run starts or ends. */
  onRunChange(): void;
  /** Where results open, read-only. */
  results: ResultDocuments;
}

/** Runner owns the run in progress (at most one). */
export class Runner {
  private run: ActiveRun | undefined;
  private runCounter = 0;
  private lastInput = "";

  constructor(private readonly hooks: RunnerHooks) {}

  /** The workDoneToken of the run in progress. */
  activeToken(): string | undefined {
    return this.run?.token;
  }

  /** The label of the run in progress. */
  activeLabel(): string | undefined {
    return this.run ? runLabel(this.run.args) : undefined;
  }

  /** runSection runs the section given by a lens, or the section under the cursor. */
  async runSection(arg?: unknown): Promise<void> {
    let args: RunArgs | undefined = isRunArgs(arg) ? arg : undefined;
    if (!args) {
      args = await this.sectionAtCursor();
      if (!args) {
        return;
      }
    }
    await this.execute(SERVER_RUN_SECTION, args);
  }

  /** runPrompt asks for the input and runs the whole prompt. */
  async runPrompt(arg?: unknown): Promise<void> {
    let uri: string | undefined;
    if (isRunArgs(arg)) {
      uri = arg.uri;
    } else {
      const doc = vscode.window.activeTextEditor?.document;
      if (!doc || doc.languageId !== "markdown") {
        void vscode.window.showInformationMessage("PromptForge: open a prompt (a Markdown file with promptforge frontmatter) to run it.");
        return;
      }
      uri = doc.uri.toString();
    }
    const input = await vscode.window.showInputBox({
      title: "PromptForge: Run Prompt",
      prompt: "Input for the prompt ({{ args }}); may be empty",
      value: this.lastInput,
      ignoreFocusOut: true,
    });
    if (input === undefined) {
      return;
    }
    this.lastInput = input;
    await this.execute(SERVER_RUN_PROMPT, { uri, input });
  }

  /** cancelRun cancels the run in progress, if any. */
  cancelRun(): void {
    if (this.run) {
      this.hooks.transcript.appendLine("Cancelling…");
      this.run.cts.cancel();
    }
  }

  private async sectionAtCursor(): Promise<RunArgs | undefined> {
    const editor = vscode.window.activeTextEditor;
    if (!editor || editor.document.languageId !== "markdown") {
      void vscode.window.showInformationMessage("PromptForge: open a prompt and put the cursor in a section to run it.");
      return undefined;
    }
    const client = this.hooks.requireClient();
    if (!client) {
      return undefined;
    }
    let lenses: LensLike[] | null;
    try {
      lenses = await client.sendRequest<LensLike[] | null>("textDocument/codeLens", {
        textDocument: { uri: editor.document.uri.toString() },
      });
    } catch (err) {
      void vscode.window.showErrorMessage(`PromptForge: could not find the sections of this file: ${errorMessage(err)}`);
      return undefined;
    }
    const lens = sectionLensAt(lenses ?? [], editor.selection.active.line);
    const a = lens?.command?.arguments?.[0];
    if (!isRunArgs(a)) {
      void vscode.window.showInformationMessage(
        "PromptForge: the cursor is not inside a runnable section (H2..H6) of a prompt. Use Run Prompt to run the whole prompt.",
      );
      return undefined;
    }
    return a;
  }

  /** execute sends the run command, streams progress and shows the result in a new tab. */
  async execute(command: string, args: RunArgs): Promise<void> {
    const client = this.hooks.requireClient();
    if (!client) {
      return;
    }
    if (this.run) {
      void vscode.window.showWarningMessage(
        `PromptForge: ${runLabel(this.run.args)} is still running. Cancel it first ("PromptForge: Cancel Run").`,
      );
      return;
    }
    const transcript = this.hooks.transcript;
    const cts = new vscode.CancellationTokenSource();
    const token = `promptforge-run-${++this.runCounter}`;
    const run: ActiveRun = { args, cts, token };
    this.run = run;
    const label = runLabel(args);
    transcript.clear();
    transcript.appendLine(`▶ Run ${label}${args.input ? ` with input ${JSON.stringify(args.input)}` : ""}`);
    transcript.show(true);
    this.hooks.onRunChange();
    // Progress goes to the notification; the transcript comes from the
    // server's log messages, which carry the full model and tool exchanges.
    let report: ((line: string) => void) | undefined;
    const progressSub = client.onProgress(token, (v) => {
      const line = progressLine(v);
      if (line && report) {
        report(line.trim());
      }
    });
    try {
      const result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `PromptForge: running ${label}`, cancellable: true },
        (progress, uiToken) => {
          report = (message) => progress.report({ message });
          uiToken.onCancellationRequested(() => cts.cancel());
          return client.sendRequest<unknown>(
            "workspace/executeCommand",
            { command, arguments: [args], workDoneToken: token },
            cts.token,
          );
        },
      );
      const text = resultText(result);
      transcript.appendLine(`■ Result (${text.length} characters) opened in a new tab.`);
      const doc = await vscode.workspace.openTextDocument(this.hooks.results.add(label, text));
      await vscode.window.showTextDocument(doc, { preview: false, viewColumn: vscode.ViewColumn.Beside });
    } catch (err) {
      if (cts.token.isCancellationRequested || errorCode(err) === REQUEST_CANCELLED) {
        transcript.appendLine("■ Run cancelled.");
        void vscode.window.showInformationMessage(`PromptForge: run of ${label} cancelled.`);
      } else {
        const msg = errorMessage(err);
        transcript.appendLine(`■ Run failed: ${msg}`);
        void vscode.window.showErrorMessage(`PromptForge: run of ${label} failed: ${msg}`, "Show Transcript").then((pick) => {
          if (pick) {
            transcript.show(true);
          }
        });
      }
    } finally {
      progressSub.dispose();
      cts.dispose();
      if (this.run === run) {
        this.run = undefined;
      }
      this.hooks.onRunChange();
    }
  }
}
