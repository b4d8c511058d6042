// ForgeController puts the extension's parts together: the server lifecycle
// (lifecycle.ts), the output channels and message routing (logs.ts), the
// status bar (status.ts), runs (runner.ts), the gateway key (secrets.ts) and
// the commands (commands.ts). Each part is testable on its own against the
// `vscode` stub; the controller only forwards between them.

import * as vscode from "vscode";
import { RESULT_SCHEME, ResultDocuments } from "./results";
import { registerCommands, rewriteLensCommand } from "./commands";
import { ClientFactory, Probe, ServerLifecycle } from "./lifecycle";
import { Logs } from "./logs";
import { probeServer } from "./probe";
import type { RunArgs } from "./run";
import { Runner } from "./runner";
import { GatewayKey } from "./secrets";
import { requireTrust } from "./trust";
import { ServerState, StatusView } from "./status";
import { errorMessage } from "./errors";
import { isRunArgs } from "./run";
import { isRenderReply, RENDER_SCHEME, renderLabel, SERVER_RENDER_PROMPT } from "./render";

export { rewriteLensCommand } from "./commands";
export { SERVER_CONFIG_SECTION } from "./lifecycle";
export type { ClientFactory, ClientOptions, ServerClient } from "./lifecycle";
export type { ServerState } from "./status";

/** ForgeController owns the server, the status bar item and the run UI. */
export class ForgeController implements vscode.Disposable {
  readonly log: vscode.OutputChannel;
  readonly transcript: vscode.OutputChannel;
  readonly status: vscode.StatusBarItem;
  private readonly logs: Logs;
  private readonly statusView: StatusView;
  private readonly server: ServerLifecycle;
  private readonly runner: Runner;
  private readonly key: GatewayKey;
  private readonly renderings = new ResultDocuments(RENDER_SCHEME, "Rendered");
  private readonly disposables: vscode.Disposable[] = [];

  constructor(ctx: vscode.ExtensionContext, createClient: ClientFactory, probe: Probe = probeServer) {
    // Message routing asks the runner for the run in progress; neither
    // callback is called before the constructor returns.
    this.logs = new Logs(() => this.runner.activeToken());
    this.log = this.logs.log;
    this.transcript = this.logs.transcript;
    const results = new ResultDocuments();
    this.disposables.push(vscode.workspace.registerTextDocumentContentProvider(RESULT_SCHEME, results));
    this.disposables.push(vscode.workspace.registerTextDocumentContentProvider(RENDER_SCHEME, this.renderings));
    this.runner = new Runner({
      results,
      transcript: this.transcript,
      requireClient: () => this.server.requireClient(),
      onRunChange: () => this.render(),
    });
    this.statusView = new StatusView();
    this.status = this.statusView.item;
    this.key = new GatewayKey(ctx.secrets);
    this.server = new ServerLifecycle(
      {
        log: this.log,
        extensionPath: ctx.extensionPath,
        gatewayKey: () => this.key.get(),
        onStateChange: () => this.render(),
        beforeStop: () => this.runner.cancelRun(),
        showOutput: () => this.showOutput(),
        onLogMessage: (type, message) => this.logs.onLogMessage(type, message),
        onShowMessage: (type, message) => this.logs.onShowMessage(type, message),
        rewriteCommand: rewriteLensCommand,
      },
      createClient,
      probe,
    );
    this.disposables.push(this.logs, this.statusView, this.server);
    this.render();
    this.statusView.show();
  }

  get state(): ServerState {
    return this.server.state;
  }

  get version(): string | undefined {
    return this.server.version;
  }

  /** The resolved forge-lsp binary, once the server has started. */
  get serverCommand(): string | undefined {
    return this.server.command;
  }

  /** Last problem shown to the user, kept for the status bar tooltip. */
  get problem(): string | undefined {
    return this.server.problem;
  }

  /** registerCommands wires the contributed commands and configuration changes. */
  registerCommands(): void {
    this.disposables.push(...registerCommands(this));
  }

  start(): Promise<void> {
    return this.server.start();
  }

  stop(): Promise<void> {
    return this.server.stop();
  }

  restart(): Promise<void> {
    return this.server.restart();
  }

  onConfigurationChanged(e: vscode.ConfigurationChangeEvent): void {
    this.server.onConfigurationChanged(e);
  }

  configurationFor(section: string | undefined): unknown {
    return this.server.configurationFor(section);
  }

  showOutput(): void {
    this.logs.showOutput();
  }

  /** setGatewayKey asks for the key, keeps it in secret storage and restarts the server with it. */
  async setGatewayKey(): Promise<void> {
    if (await this.key.ask()) {
      await this.restart();
    }
  }

  runSection(arg?: unknown): Promise<void> {
    if (!requireTrust()) {
      return Promise.resolve();
    }
    return this.runner.runSection(arg);
  }

  runPrompt(arg?: unknown): Promise<void> {
    if (!requireTrust()) {
      return Promise.resolve();
    }
    return this.runner.runPrompt(arg);
  }

  cancelRun(): void {
    this.runner.cancelRun();
  }

  /**
   * showRenderedPrompt opens what the model will see (the server's
   * forge.renderPrompt, docs/review.md) as a read-only Markdown document:
   * the lens's section, or the active prompt as a whole. Nothing runs but
   * the prompt's sandboxed Lua, so Restricted Mode allows it.
   */
  async showRenderedPrompt(arg?: unknown): Promise<void> {
    let args = isRunArgs(arg) ? arg : undefined;
    if (!args) {
      const doc = vscode.window.activeTextEditor?.document;
      if (!doc) {
        void vscode.window.showInformationMessage("PromptForge: open a prompt to show it rendered.");
        return;
      }
      args = { uri: doc.uri.toString() };
    }
    const client = this.server.requireClient();
    if (!client) {
      return;
    }
    const label = renderLabel(args);
    try {
      const reply = await client.sendRequest<unknown>("workspace/executeCommand", {
        command: SERVER_RENDER_PROMPT,
        arguments: [{ uri: args.uri, section: args.section, input: args.input }],
      });
      if (!isRenderReply(reply)) {
        throw new Error("the server's reply is not a rendering (is forge-lsp older than the extension?)");
      }
      const doc = await vscode.workspace.openTextDocument(this.renderings.add(label, reply.markdown));
      await vscode.window.showTextDocument(doc, { preview: true, viewColumn: vscode.ViewColumn.Beside });
    } catch (err) {
      void vscode.window.showErrorMessage(`PromptForge: cannot render ${label}: ${errorMessage(err)}`);
    }
  }

  execute(command: string, args: RunArgs): Promise<void> {
    return this.runner.execute(command, args);
  }

  onLogMessage(type: number, message: string): void {
    this.logs.onLogMessage(type, message);
  }

  onShowMessage(type: number, message: string): void {
    this.logs.onShowMessage(type, message);
  }

  /** render updates the status bar item from the current state. */
  render(): void {
    this.statusView.render({
      state: this.server.state,
      version: this.server.version,
      problem: this.server.problem,
      running: this.runner.activeLabel(),
    });
  }

  dispose(): void {
    void this.stop();
    for (const d of this.disposables.splice(0)) {
      d.dispose();
    }
  }
}
