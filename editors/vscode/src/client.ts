// The real ServerClient: vscode-languageclient over stdio to `forge-lsp serve`.

import * as vscode from "vscode";
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  LanguageClientOptions,
  LogMessageNotification,
  RevealOutputChannelOn,
  ServerOptions,
  ShowMessageNotification,
  State,
  Trace,
  TransportKind,
  WorkDoneProgress,
} from "vscode-languageclient/node";
import { debugLenses } from "./debug";
import { renderLensCommand } from "./render";
import { keepLens, trusted } from "./trust";
import type { ClientOptions, ServerClient } from "./lifecycle";
import type { ProgressValue } from "./run";

/** Restarts allowed within the window below before the client gives up. */
const MAX_RESTARTS = 3;
const RESTART_WINDOW_MS = 3 * 60 * 1000;

/** createLanguageClient builds the ServerClient used in the editor. */
export function createLanguageClient(opts: ClientOptions): ServerClient {
  const serverOptions: ServerOptions = {
    command: opts.command,
    args: ["serve"],
    transport: TransportKind.stdio,
    options: { env: opts.env },
  };
  const restarts: number[] = [];
  let stopHandler: ((reason: string) => void) | undefined;
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: "file", language: "markdown" },
      { scheme: "untitled", language: "markdown" },
      // Prompt test files: validation, ▶ Run test / ▶ Record lenses, results.
      { scheme: "file", pattern: "**/*.test.yaml" },
    ],
    initializationOptions: opts.settings,
    outputChannel: opts.log,
    revealOutputChannelOn: RevealOutputChannelOn.Never,
    errorHandler: {
      error: () => ({ action: ErrorAction.Continue }),
      closed: () => {
        const now = Date.now();
        restarts.push(now);
        while (restarts.length > 0 && now - restarts[0] > RESTART_WINDOW_MS) {
          restarts.shift();
        }
        if (restarts.length > MAX_RESTARTS) {
          stopHandler?.(`it exited ${restarts.length} times in the last ${RESTART_WINDOW_MS / 60000} minutes (see the PromptForge output)`);
          return { action: CloseAction.DoNotRestart, handled: true };
        }
        return { action: CloseAction.Restart, handled: true };
      },
    },
    middleware: {
      provideCodeLenses: async (doc, token, next) => {
        const isTrusted = trusted();
        const lenses = (await next(doc, token))?.filter((l) => keepLens(l.command?.command, isTrusted));
        const debug = debugLenses(lenses ?? []);
        for (const l of lenses ?? []) {
          const c = renderLensCommand(l);
          if (c) {
            debug.push(new vscode.CodeLens(l.range, c));
          }
        }
        for (const l of lenses ?? []) {
          if (l.command) {
            l.command = opts.rewriteCommand(l.command);
          }
        }
        return lenses ? [...lenses, ...debug] : lenses;
      },
      resolveCodeLens: async (lens, token, next) => {
        const l = await next(lens, token);
        if (l?.command) {
          l.command = opts.rewriteCommand(l.command);
        }
        return l;
      },
      workspace: {
        // The server asks for its own section ("forge"); the answer is built
        // from the promptforge.* settings rather than read verbatim.
        configuration: (params) => params.items.map((item) => opts.configurationFor(item.section) ?? null),
      },
    },
  };
  const client = new LanguageClient("promptforge", "PromptForge", serverOptions, clientOptions);
  const traces: Record<string, Trace> = { off: Trace.Off, messages: Trace.Messages, verbose: Trace.Verbose };

  return {
    async start() {
      await client.start();
      await client.setTrace(traces[opts.trace] ?? Trace.Off);
      // The default handler writes log messages to the output channel; the
      // controller decides whether a message belongs to a run's transcript.
      client.onNotification(LogMessageNotification.type, (p) => opts.onLogMessage(p.type, p.message));
      client.onNotification(ShowMessageNotification.type, (p) => opts.onShowMessage(p.type, p.message));
    },
    async stop() {
      if (client.state !== State.Stopped) {
        await client.stop();
      }
    },
    serverVersion() {
      return client.initializeResult?.serverInfo?.version;
    },
    sendRequest<R>(method: string, params: unknown, token?: vscode.CancellationToken) {
      return client.sendRequest<R>(method, params, token);
    },
    sendNotification(method: string, params: unknown) {
      return client.sendNotification(method, params);
    },
    onProgress(token: string, handler: (v: ProgressValue) => void) {
      return client.onProgress(WorkDoneProgress.type, token, (v) => handler(v as ProgressValue));
    },
    onDidStop(handler) {
      stopHandler = handler;
      return new vscode.Disposable(() => {
        if (stopHandler === handler) {
          stopHandler = undefined;
        }
      });
    },
  };
}
