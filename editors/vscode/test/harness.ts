// Helpers for driving the real forge-lsp binary over stdio with
// vscode-jsonrpc, the library VS Code's language client is built on.

import { ChildProcess, execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as http from "node:http";
import * as os from "node:os";
import * as path from "node:path";
import { createMessageConnection, MessageConnection, StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node";

/** Root of the Go module (editors/vscode/out/test -> repo). */
export const REPO = path.resolve(__dirname, "..", "..", "..", "..");
/** Prompts shared by the VS Code and Neovim tests. */
export const TESTDATA = path.join(REPO, "editors", "testdata");

let built: string | undefined;

/**
 * serverBinary returns FORGE_LSP_BIN, or builds forge-lsp from this checkout
 * once per test process so that `npm test` also works on its own.
 */
export function serverBinary(): string {
  const fromEnv = process.env.FORGE_LSP_BIN;
  if (fromEnv) {
    return fromEnv;
  }
  if (!built) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "forge-lsp-bin-"));
    built = path.join(dir, "forge-lsp");
    execFileSync("go", ["build", "-o", built, "./cmd/forge-lsp"], { cwd: REPO, stdio: "inherit" });
  }
  return built;
}

/** fileUri turns an absolute path into a file: URI the way VS Code does. */
export function fileUri(p: string): string {
  return "file://" + p.split("/").map(encodeURIComponent).join("/");
}

export interface Diagnostic {
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  severity?: number;
  code?: string | number;
  source?: string;
  message: string;
}

/** A running server plus everything it has sent. */
export class Session {
  readonly conn: MessageConnection;
  readonly proc: ChildProcess;
  stderr = "";
  exitCode: number | null | undefined;
  diagnostics = new Map<string, { version?: number; diagnostics: Diagnostic[] }[]>();
  logs: { type: number; message: string }[] = [];
  shown: { type: number; message: string }[] = [];
  progress: { token: string | number; value: { kind: string; title?: string; message?: string } }[] = [];
  configurationRequests = 0;
  private waiters: (() => void)[] = [];

  constructor(bin: string, private readonly settings: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env) {
    this.proc = spawn(bin, ["serve"], { env, stdio: ["pipe", "pipe", "pipe"] });
    this.proc.stderr!.on("data", (b) => (this.stderr += String(b)));
    this.proc.on("exit", (code) => {
      this.exitCode = code;
      this.poke();
    });
    this.conn = createMessageConnection(new StreamMessageReader(this.proc.stdout!), new StreamMessageWriter(this.proc.stdin!));
    this.conn.onNotification("textDocument/publishDiagnostics", (p: { uri: string; version?: number; diagnostics: Diagnostic[] }) => {
      const list = this.diagnostics.get(p.uri) ?? [];
      list.push({ version: p.version, diagnostics: p.diagnostics });
      this.diagnostics.set(p.uri, list);
      this.poke();
    });
    this.conn.onNotification("window/logMessage", (p: { type: number; message: string }) => {
      this.logs.push(p);
      this.poke();
    });
    this.conn.onNotification("window/showMessage", (p: { type: number; message: string }) => {
      this.shown.push(p);
      this.poke();
    });
    this.conn.onNotification("$/progress", (p: Session["progress"][number]) => {
      this.progress.push(p);
      this.poke();
    });
    this.conn.onRequest("window/workDoneProgress/create", () => null);
    this.conn.onRequest("client/registerCapability", () => null);
    this.conn.onRequest("workspace/configuration", (p: { items: { section?: string }[] }) => {
      this.configurationRequests++;
      return p.items.map((i) => (i.section === "forge" ? this.settings : null));
    });
    this.conn.listen();
  }

  private poke(): void {
    for (const w of this.waiters.splice(0)) {
      w();
    }
  }

  /** waitFor resolves with the first truthy value of check, re-evaluated on every message. */
  async waitFor<T>(what: string, check: () => T | undefined | false, timeoutMs = 15000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = check();
      if (v) {
        return v;
      }
      if (this.exitCode !== undefined) {
        throw new Error(`server exited (${this.exitCode}) while waiting for ${what}; stderr:\n${this.stderr}`);
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Error(`timed out waiting for ${what}; stderr:\n${this.stderr}`);
      }
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 200));
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  async initialize(initializationOptions: unknown): Promise<{ serverInfo?: { name: string; version?: string }; capabilities: Record<string, unknown> }> {
    const result = await this.conn.sendRequest<{ serverInfo?: { name: string; version?: string }; capabilities: Record<string, unknown> }>("initialize", {
      processId: process.pid,
      rootUri: fileUri(TESTDATA),
      workspaceFolders: [{ uri: fileUri(TESTDATA), name: "testdata" }],
      initializationOptions,
      capabilities: {
        window: { workDoneProgress: true, showMessage: {} },
        workspace: { configuration: true, workspaceFolders: true },
        textDocument: {
          synchronization: { dynamicRegistration: false, didSave: true },
          hover: { contentFormat: ["markdown", "plaintext"] },
          publishDiagnostics: { relatedInformation: true, versionSupport: true, codeDescriptionSupport: true },
          codeLens: {},
        },
      },
    });
    await this.conn.sendNotification("initialized", {});
    return result;
  }

  /** open sends didOpen for a file of the testdata folder (or given text) and returns its URI. */
  async open(file: string, text?: string, version = 1): Promise<string> {
    const p = path.isAbsolute(file) ? file : path.join(TESTDATA, file);
    const uri = fileUri(p);
    await this.conn.sendNotification("textDocument/didOpen", {
      textDocument: { uri, languageId: "markdown", version, text: text ?? fs.readFileSync(p, "utf8") },
    });
    return uri;
  }

  /**
   * shutdown ends the session as editors do: shutdown, exit, then the pipes
   * are closed. It returns the exit code and whether the process had already
   * exited on the exit notification alone (LSP says it should).
   */
  async shutdown(): Promise<{ code: number | null; exitedOnExit: boolean }> {
    let exitedOnExit = this.exitCode !== undefined;
    if (this.exitCode === undefined) {
      await this.conn.sendRequest("shutdown");
      await this.conn.sendNotification("exit");
      exitedOnExit = await this.waitFor("exit", () => this.exitCode !== undefined, 1000).then(
        () => true,
        () => false,
      );
      this.proc.stdin!.end();
      await this.waitFor("exit after stdin closed", () => this.exitCode !== undefined, 5000).catch(() => this.proc.kill());
    }
    this.conn.dispose();
    return { code: this.exitCode ?? null, exitedOnExit };
  }
}

/** A scripted OpenAI-compatible gateway on loopback that records what it receives. */
export class FakeGateway {
  readonly server: http.Server;
  exchanges: { method: string; endpoint: string; request: unknown; status: number; response: string }[] = [];
  constructor(private readonly reply: (body: { messages?: { role: string; content?: string }[] }) => string) {
    this.server = http.createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        const endpoint = (req.url ?? "").replace(/^\/v1\//, "");
        let status = 200;
        let response: string;
        if (req.method === "GET" && endpoint === "models") {
          response = JSON.stringify({
            data: [{ id: "test-writer", description: "A model suited for careful analysis, coding, and general assistance", context: 32000, thinking: "never" }],
          });
        } else if (req.method === "POST" && endpoint === "chat/completions") {
          const parsed = JSON.parse(body);
          response = JSON.stringify({
            id: `chatcmpl-${this.exchanges.length + 1}`,
            object: "chat.completion",
            model: parsed.model,
            choices: [{ index: 0, message: { role: "assistant", content: this.reply(parsed) }, finish_reason: "stop" }],
            usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
          });
        } else {
          status = 404;
          response = JSON.stringify({ error: { message: "not found" } });
        }
        this.exchanges.push({ method: req.method ?? "", endpoint, request: body === "" ? null : JSON.parse(body), status, response });
        res.writeHead(status, { "content-type": "application/json" });
        res.end(response);
      });
    });
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    const addr = this.server.address() as { port: number };
    return `http://127.0.0.1:${addr.port}/v1`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  /** writeCassette saves the recorded exchanges in forge-lsp's replay cassette format (JSON Lines). */
  writeCassette(file: string): void {
    const lines = [JSON.stringify({ cassette: "forge-lsp", version: 1 })];
    // forge-lsp records a streamed round as the request it would send
    // without streaming (the editor's Run asks for a stream), so a replay
    // matches either way: the fake gateway records what forge-lsp would.
    const unstreamed = (r: unknown): unknown => {
      if (r && typeof r === "object" && !Array.isArray(r)) {
        const { stream: _s, stream_options: _o, ...rest } = r as Record<string, unknown>;
        return rest;
      }
      return r;
    };
    this.exchanges.forEach((e, i) => lines.push(JSON.stringify({ seq: i + 1, ...e, request: unstreamed(e.request) })));
    fs.writeFileSync(file, lines.join("\n") + "\n");
  }
}
