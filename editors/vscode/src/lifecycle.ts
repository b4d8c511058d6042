// The server's lifecycle: probing the binary, starting and stopping the
// language client, restarting on setting changes, and answering the
// server's configuration requests. It talks to the language client through
// the small ServerClient interface so that unit tests can use a fake client.

import * as os from "node:os";
import * as vscode from "vscode";
import { readSettings, userGetter, serverEnv, serverSettings, Settings, ServerSettings } from "./config";
import { errorMessage } from "./errors";
import { probeServer, ProbeResult, versionWarning } from "./probe";
import { describeSource, resolveServer, serverCandidates, ServerSource } from "./resolve";
import type { ProgressValue } from "./run";
import type { ServerState } from "./status";

export type { ServerState } from "./status";

/** The few language-client operations the extension needs. */
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

/** Runs `<server> version` before the client starts the server. */
export type Probe = (path: string, env: NodeJS.ProcessEnv) => Promise<ProbeResult>;

/** The configuration section the server asks for with workspace/configuration. */
export const SERVER_CONFIG_SECTION = "forge";

/** What the lifecycle needs from the rest of the extension. */
export interface LifecycleHooks {
  log: vscode.OutputChannel;
  /** The extension's folder; a platform-specific package has bin/forge-lsp there. */
  extensionPath: string | undefined;
  /** The stored gateway key, if any. */
  gatewayKey(): Thenable<string | undefined>;
  /** Called after every state change. */
  onStateChange(): void;
  /** Called by stop() before the server goes away. */
  beforeStop(): void;
  showOutput(): void;
  /** The rest of ClientOptions: message routing and lens rewriting. */
  onLogMessage(type: number, message: string): void;
  onShowMessage(type: number, message: string): void;
  rewriteCommand(cmd: vscode.Command): vscode.Command;
}

/** ServerLifecycle owns the language client of one forge-lsp process at a time. */
export class ServerLifecycle implements vscode.Disposable {
  state: ServerState = "stopped";
  version: string | undefined;
  /** Last problem shown to the user, kept for the status bar tooltip. */
  problem: string | undefined;
  /** Where the running server came from. */
  source: ServerSource | undefined;
  /** The forge-lsp binary the server was started from (the Testing view runs it too). */
  command: string | undefined;
  private client: ServerClient | undefined;
  /** The settings sent as initializationOptions to the running server. */
  private startedWith: ServerSettings | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly hooks: LifecycleHooks,
    private readonly createClient: ClientFactory,
    private readonly probe: Probe = probeServer,
  ) {}

  settings(): Settings {
    return readSettings(userGetter(vscode.workspace.getConfiguration("promptforge")));
  }

  root(): string | undefined {
    return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  }

  /** start probes the server binary and starts the language client. It never throws. */
  async start(): Promise<void> {
    if (this.client || this.state === "starting") {
      return;
    }
    const log = this.hooks.log;
    const settings = this.settings();
    const key = await this.hooks.gatewayKey();
    const env = serverEnv(process.env, key);
    this.setState("starting");
    // A relative server path is resolved against the home folder, never
    // the workspace: the workspace must not choose the binary that runs.
    const candidates = serverCandidates(settings.serverPath, os.homedir(), this.hooks.extensionPath);
    const found = await resolveServer(candidates, (c) => this.probe(c, env));
    for (const t of found.tried) {
      log.appendLine(`Not using ${t}`);
    }
    if (!found.ok) {
      this.fail(found.message);
      return;
    }
    const command = found.command;
    log.appendLine(`Starting forge-lsp ${found.version} from ${describeSource(found.source)}: ${command} serve`);
    this.source = found.source;
    this.command = command;
    this.version = found.version;
    this.startedWith = serverSettings(settings, this.root());
    const client = this.createClient({
      command,
      env,
      settings: this.startedWith,
      trace: settings.trace,
      log,
      onLogMessage: (type, message) => this.hooks.onLogMessage(type, message),
      onShowMessage: (type, message) => this.hooks.onShowMessage(type, message),
      rewriteCommand: (cmd) => this.hooks.rewriteCommand(cmd),
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
      log.appendLine(warn);
      void vscode.window.showWarningMessage(`PromptForge: ${warn}`);
    }
  }

  /** stop stops the client and the server process. */
  async stop(): Promise<void> {
    this.hooks.beforeStop();
    const c = this.client;
    this.client = undefined;
    if (c) {
      try {
        await c.stop();
      } catch (err) {
        this.hooks.log.appendLine(`Stopping the server: ${errorMessage(err)}`);
      }
    }
    this.setState("stopped");
  }

  /** restart stops and starts the server, picking up new settings and the key. */
  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  /**
   * onConfigurationChanged restarts the server for a new path or trace level
   * or a cleared setting, and otherwise tells the running server to fetch
   * its settings again.
   */
  onConfigurationChanged(e: vscode.ConfigurationChangeEvent): void {
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
        this.hooks.log.appendLine(`Sending the new settings: ${errorMessage(err)}`);
      });
    }
  }

  /** configurationFor answers the server's workspace/configuration request. */
  configurationFor(section: string | undefined): unknown {
    if (section === SERVER_CONFIG_SECTION) {
      return serverSettings(this.settings(), this.root());
    }
    return null;
  }

  /** requireClient returns the running client, or says why there is none. */
  requireClient(): ServerClient | undefined {
    if (!this.client || this.state !== "running") {
      void vscode.window.showErrorMessage(
        this.problem ?? "PromptForge: the language server is not running. Run \"PromptForge: Restart Server\".",
      );
      return undefined;
    }
    return this.client;
  }

  private fail(message: string): void {
    this.problem = message;
    this.hooks.log.appendLine(message);
    this.setState("failed");
    void vscode.window.showErrorMessage(message, "Open Settings", "Show Output").then((pick) => {
      if (pick === "Open Settings") {
        void vscode.commands.executeCommand("workbench.action.openSettings", "promptforge.server.path");
      } else if (pick === "Show Output") {
        this.hooks.showOutput();
      }
    });
  }

  private setState(s: ServerState): void {
    this.state = s;
    this.hooks.onStateChange();
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) {
      d.dispose();
    }
  }
}
