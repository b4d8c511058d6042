// The extension's behaviour: server lifecycle, status bar, runs and the
// gateway key. It talks to the language client through the small
// ServerClient interface so that unit tests can drive it with a fake client
// and a stub of the `vscode` module.

import * as vscode from "vscode";
import {
  GATEWAY_KEY_ENV,
  GATEWAY_KEY_SECRET,
  readSettings,
  resolvePath,
  serverEnv,
  serverSettings,
  Settings,
  ServerSettings,
} from "./config";
import { EXPECTED_SERVER_VERSION, probeServer, ProbeResult, versionWarning } from "./probe";
import {
  CMD_RUN_PROMPT,
  CMD_RUN_SECTION,
  isRunArgs,
  LensLike,
  progressLine,
  ProgressValue,
  resultText,
  RunArgs,
  runLabel,
  sectionLensAt,
  SERVER_RUN_PROMPT,
  SERVER_RUN_SECTION,
} from "./run";

/** The few language-client operations the controller needs. */
export interface ServerClient {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Version from the initialize result's serverInfo, once started. */
  serverVersion(): string | undefined;
  sendRequest<R>(method: string, params: unknown, token?: vscode.CancellationToken): Promise<R>;
  sendNotification(method: string, params: unknown): Promise<void>;
  onProgress(token: string, handler: (value: ProgressValue) => void): vscode.Disposable;
  /** Fires when the connection to a started server is lost for good. */
  onDidStop(handler: (reason: string) => void): vscode.Disposable;
}

/** Everything needed to create a client for one server process. */
export interface ClientOptions {
  command: string;
  env: NodeJS.ProcessEnv;
  settings: ServerSettings;
  trace: Settings["trace"];
  log: vscode.OutputChannel;
  /** Receives window/logMessage notifications; the controller routes them. */
  onLogMessage(type: number, message: string): void;
  /** Receives window/showMessage notifications. */
  onShowMessage(type: number, message: string): void;
  /** Maps lens commands to the extension's own commands. */
  rewriteCommand(cmd: vscode.Command): vscode.Command;
  /** Answers workspace/configuration for a section name. */
  configurationFor(section: string | undefined): unknown;
}

/** Creates a ServerClient; the real one wraps vscode-languageclient. */
export type ClientFactory = (opts: ClientOptions) => ServerClient;

/** Server state as shown in the status bar. */
export type ServerState = "stopped" | "starting" | "running" | "failed";

/** The configuration section the server asks for with workspace/configuration. */
export const SERVER_CONFIG_SECTION = "forge";

/** LSP error code for a cancelled request. */
const REQUEST_CANCELLED = -32800;

interface ActiveRun {
  args: RunArgs;
  cts: vscode.CancellationTokenSource;
  /** The workDoneToken sent with the run; the server tags its transcript with it. */
  token: string;
}

/** ForgeController owns the server, the status bar item and the run UI. */
export class ForgeController implements vscode.Disposable {
  readonly log: vscode.OutputChannel;
  readonly transcript: vscode.OutputChannel;
  readonly status: vscode.StatusBarItem;
  state: ServerState = "stopped";
  version: string | undefined;
  /** Last problem shown to the user, kept for the status bar tooltip. */
  problem: string | undefined;
  private client: ServerClient | undefined;
  /** The settings sent as initializationOptions to the running server. */
  private startedWith: ServerSettings | undefined;
  private run: ActiveRun | undefined;
  private runCounter = 0;
  private lastInput = "";
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly ctx: vscode.ExtensionContext,
    private readonly createClient: ClientFactory,
    private readonly probe: (path: string, env: NodeJS.ProcessEnv) => Promise<ProbeResult> = probeServer,
  ) {
    this.log = vscode.window.createOutputChannel("PromptForge");
    this.transcript = vscode.window.createOutputChannel("PromptForge Run");
    this.status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 0);
    this.status.name = "PromptForge";
    this.status.command = "promptforge.showOutput";
    this.disposables.push(this.log, this.transcript, this.status);
    this.render();
    this.status.show();
  }

  /** registerCommands wires the contributed commands and configuration changes. */
  registerCommands(): void {
    const reg = (id: string, fn: (...args: unknown[]) => unknown) =>
      this.disposables.push(vscode.commands.registerCommand(id, fn));
    reg(CMD_RUN_SECTION, (a) => this.runSection(a));
    reg(CMD_RUN_PROMPT, (a) => this.runPrompt(a));
    reg("promptforge.cancelRun", () => this.cancelRun());
    reg("promptforge.restartServer", () => this.restart());
    reg("promptforge.showOutput", () => this.showOutput());
    reg("promptforge.setGatewayKey", () => this.setGatewayKey());
    this.disposables.push(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration("promptforge.server.path") || e.affectsConfiguration("promptforge.trace.server")) {
          void this.restart();
        } else if (e.affectsConfiguration("promptforge") && this.client && this.state === "running") {
          const now = serverSettings(this.settings(), this.root());
          const cleared = Object.keys(this.startedWith ?? {}).some((k) => !(k in now));
          if (cleared) {
            // The server never lets an empty value override one it was
            // started with (initializationOptions), so a cleared setting
            // needs a fresh server.
            void this.restart();
            return;
          }
          // The server answers a didChangeConfiguration without settings by
          // asking for its "forge" section again (workspace/configuration).
          this.client.sendNotification("workspace/didChangeConfiguration", { settings: null }).catch((err) => {
            this.log.appendLine(`Sending the new settings: ${errorMessage(err)}`);
          });
        }
      }),
    );
  }

  private settings(): Settings {
    const cfg = vscode.workspace.getConfiguration("promptforge");
    return readSettings((k) => cfg.get(k));
  }

  private root(): string | undefined {
    return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  }

  /** start probes the server binary and starts the language client. It never throws. */
  async start(): Promise<void> {
    if (this.client || this.state === "starting") {
      return;
    }
    const settings = this.settings();
    const command = resolvePath(settings.serverPath, this.root(), true);
    const key = await this.ctx.secrets.get(GATEWAY_KEY_SECRET);
    const env = serverEnv(process.env, key);
    this.setState("starting");
    this.log.appendLine(`Starting ${command} serve`);
    const probe = await this.probe(command, env);
    if (!probe.ok) {
      this.fail(probe.message);
      return;
    }
    this.version = probe.version;
    this.startedWith = serverSettings(settings, this.root());
    const client = this.createClient({
      command,
      env,
      settings: this.startedWith,
      trace: settings.trace,
      log: this.log,
      onLogMessage: (type, message) => this.onLogMessage(type, message),
      onShowMessage: (type, message) => this.onShowMessage(type, message),
      rewriteCommand: (cmd) => rewriteLensCommand(cmd),
      configurationFor: (section) => this.configurationFor(section),
    });
    this.client = client;
    try {
      await client.start();
    } catch (err) {
      this.client = undefined;
      this.fail(`PromptForge: the language server '${command}' failed to start: ${errorMessage(err)}`);
      return;
    }
    this.disposables.push(
      client.onDidStop((reason) => {
        if (this.client === client) {
          this.client = undefined;
          this.fail(`PromptForge: the language server stopped: ${reason}. Run "PromptForge: Restart Server" to start it again.`);
        }
      }),
    );
    this.version = client.serverVersion() ?? this.version;
    this.problem = undefined;
    this.setState("running");
    const warn = versionWarning(this.version);
    if (warn) {
      this.log.appendLine(warn);
      void vscode.window.showWarningMessage(`PromptForge: ${warn}`);
    }
  }

  /** stop stops the client and the server process. */
  async stop(): Promise<void> {
    this.cancelRun();
    const c = this.client;
    this.client = undefined;
    if (c) {
      try {
        await c.stop();
      } catch (err) {
        this.log.appendLine(`Stopping the server: ${errorMessage(err)}`);
      }
    }
    this.setState("stopped");
  }

  /** restart stops and starts the server, picking up new settings and the key. */
  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  showOutput(): void {
    this.log.show(true);
  }

  /** setGatewayKey asks for the key and keeps it in secret storage, never in settings. */
  async setGatewayKey(): Promise<void> {
    const key = await vscode.window.showInputBox({
      title: "PromptForge: Set Gateway Key",
      prompt: `The key is kept in the editor's secret storage and given to forge-lsp as ${GATEWAY_KEY_ENV}. Leave empty to remove it.`,
      password: true,
      ignoreFocusOut: true,
    });
    if (key === undefined) {
      return;
    }
    if (key.trim() === "") {
      await this.ctx.secrets.delete(GATEWAY_KEY_SECRET);
      void vscode.window.showInformationMessage("PromptForge: gateway key removed.");
    } else {
      await this.ctx.secrets.store(GATEWAY_KEY_SECRET, key.trim());
      void vscode.window.showInformationMessage("PromptForge: gateway key stored; restarting the server.");
    }
    await this.restart();
  }

  /** configurationFor answers the server's workspace/configuration request. */
  configurationFor(section: string | undefined): unknown {
    if (section === SERVER_CONFIG_SECTION) {
      return serverSettings(this.settings(), this.root());
    }
    return null;
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
      this.transcript.appendLine("Cancelling…");
      this.run.cts.cancel();
    }
  }

  private async sectionAtCursor(): Promise<RunArgs | undefined> {
    const editor = vscode.window.activeTextEditor;
    if (!editor || editor.document.languageId !== "markdown") {
      void vscode.window.showInformationMessage("PromptForge: open a prompt and put the cursor in a section to run it.");
      return undefined;
    }
    const client = this.requireClient();
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

  private requireClient(): ServerClient | undefined {
    if (!this.client || this.state !== "running") {
      void vscode.window.showErrorMessage(
        this.problem ?? "PromptForge: the language server is not running. Run \"PromptForge: Restart Server\".",
      );
      return undefined;
    }
    return this.client;
  }

  /** execute sends the run command, streams progress and shows the result in a new tab. */
  async execute(command: string, args: RunArgs): Promise<void> {
    const client = this.requireClient();
    if (!client) {
      return;
    }
    if (this.run) {
      void vscode.window.showWarningMessage(
        `PromptForge: ${runLabel(this.run.args)} is still running. Cancel it first ("PromptForge: Cancel Run").`,
      );
      return;
    }
    const cts = new vscode.CancellationTokenSource();
    const token = `promptforge-run-${++this.runCounter}`;
    const run: ActiveRun = { args, cts, token };
    this.run = run;
    const label = runLabel(args);
    this.transcript.clear();
    this.transcript.appendLine(`▶ Run ${label}${args.input ? ` with input ${JSON.stringify(args.input)}` : ""}`);
    this.transcript.show(true);
    this.render();
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
      this.transcript.appendLine(`■ Result (${text.length} characters) opened in a new tab.`);
      const doc = await vscode.workspace.openTextDocument({ content: text, language: "markdown" });
      await vscode.window.showTextDocument(doc, { preview: false, viewColumn: vscode.ViewColumn.Beside });
    } catch (err) {
      if (cts.token.isCancellationRequested || errorCode(err) === REQUEST_CANCELLED) {
        this.transcript.appendLine("■ Run cancelled.");
        void vscode.window.showInformationMessage(`PromptForge: run of ${label} cancelled.`);
      } else {
        const msg = errorMessage(err);
        this.transcript.appendLine(`■ Run failed: ${msg}`);
        void vscode.window.showErrorMessage(`PromptForge: run of ${label} failed: ${msg}`, "Show Transcript").then((pick) => {
          if (pick) {
            this.transcript.show(true);
          }
        });
      }
    } finally {
      progressSub.dispose();
      cts.dispose();
      if (this.run === run) {
        this.run = undefined;
      }
      this.render();
    }
  }

  /**
   * onLogMessage routes the server's window/logMessage. The server tags a
   * run's transcript with "[forge run <workDoneToken>]": those lines go to the
   * transcript without the tag. Untagged messages during a run are taken as
   * transcript too; everything else is server log.
   */
  onLogMessage(type: number, message: string): void {
    const tag = /^\[forge run ([^\]]*)\] ?/.exec(message);
    if (this.run && (!tag || tag[1] === this.run.token)) {
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
    if (this.run) {
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

  private fail(message: string): void {
    this.problem = message;
    this.log.appendLine(message);
    this.setState("failed");
    void vscode.window.showErrorMessage(message, "Open Settings", "Show Output").then((pick) => {
      if (pick === "Open Settings") {
        void vscode.commands.executeCommand("workbench.action.openSettings", "promptforge.server.path");
      } else if (pick === "Show Output") {
        this.showOutput();
      }
    });
  }

  private setState(s: ServerState): void {
    this.state = s;
    this.render();
  }

  /** render updates the status bar item from the current state. */
  render(): void {
    const v = this.version ? ` ${this.version}` : "";
    this.status.backgroundColor = undefined;
    switch (this.state) {
      case "starting":
        this.status.text = "$(sync~spin) forge-lsp";
        this.status.tooltip = "PromptForge: starting the language server";
        break;
      case "running": {
        const warn = versionWarning(this.version);
        if (this.run) {
          this.status.text = `$(play) forge-lsp${v}: running`;
          this.status.tooltip = `PromptForge: running ${runLabel(this.run.args)}`;
        } else if (warn) {
          this.status.text = `$(warning) forge-lsp${v}`;
          this.status.tooltip = warn;
          this.status.backgroundColor = new vscode.ThemeColor("statusBarItem.warningBackground");
        } else {
          this.status.text = `$(check) forge-lsp${v}`;
          this.status.tooltip = `PromptForge: forge-lsp${v} is running (expected ${EXPECTED_SERVER_VERSION})`;
        }
        break;
      }
      case "failed":
        this.status.text = "$(error) forge-lsp";
        this.status.tooltip = this.problem ?? "PromptForge: the language server failed";
        this.status.backgroundColor = new vscode.ThemeColor("statusBarItem.errorBackground");
        break;
      default:
        this.status.text = "$(circle-slash) forge-lsp";
        this.status.tooltip = "PromptForge: the language server is stopped";
    }
  }

  dispose(): void {
    void this.stop();
    for (const d of this.disposables.splice(0)) {
      d.dispose();
    }
  }
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

function logTypeName(t: number): string {
  return ["", "error", "warning", "info", "log", "debug"][t] ?? "log";
}

function errorMessage(err: unknown): string {
  if (err instanceof Error) {
    return err.message;
  }
  return String(err);
}

function errorCode(err: unknown): number | undefined {
  const c = (err as { code?: unknown } | undefined)?.code;
  return typeof c === "number" ? c : undefined;
}
