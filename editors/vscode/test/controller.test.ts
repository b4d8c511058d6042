// Unit tests of the controller against the vscode stub and a fake client.
import { makeContext, stub, window, workspace } from "./vscode-stub";
import { test, beforeEach } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import type * as vscode from "vscode";
import { ClientOptions, ForgeController, rewriteLensCommand, ServerClient } from "../src/controller";
import { GATEWAY_KEY_ENV, GATEWAY_KEY_SECRET } from "../src/config";
import { probeServer, ProbeResult } from "../src/probe";
import type { ProgressValue } from "../src/run";
import { registerDebugger } from "../src/debug";
import { registerTraceView } from "../src/traceview";
import { keepLens } from "../src/trust";
import { renderLensCommand } from "../src/render";

/** A fake ServerClient that records requests and answers from a script. */
class FakeClient implements ServerClient {
  requests: { method: string; params: unknown; token?: vscode.CancellationToken }[] = [];
  progress = new Map<string, (v: ProgressValue) => void>();
  started = false;
  stopped = false;
  answer: (method: string, params: unknown, token?: vscode.CancellationToken) => Promise<unknown> = () =>
    Promise.resolve(null);
  constructor(readonly opts: ClientOptions, private readonly version?: string) {}
  async start() {
    this.started = true;
  }
  async stop() {
    this.stopped = true;
  }
  serverVersion() {
    return this.version;
  }
  sendRequest<R>(method: string, params: unknown, token?: vscode.CancellationToken): Promise<R> {
    this.requests.push({ method, params, token });
    return this.answer(method, params, token) as Promise<R>;
  }
  notifications: { method: string; params: unknown }[] = [];
  async sendNotification(method: string, params: unknown) {
    this.notifications.push({ method, params });
  }
  onProgress(token: string, handler: (v: ProgressValue) => void) {
    this.progress.set(token, handler);
    return { dispose: () => this.progress.delete(token) };
  }
  onDidStop() {
    return { dispose() {} };
  }
}

const okProbe = (version: string) => (): Promise<ProbeResult> => Promise.resolve({ ok: true, version });

function setup(version = "0.1.0", probe?: (p: string, e: NodeJS.ProcessEnv) => Promise<ProbeResult>) {
  const ctx = makeContext();
  const clients: FakeClient[] = [];
  const c = new ForgeController(
    ctx as unknown as vscode.ExtensionContext,
    (opts) => {
      const f = new FakeClient(opts, version);
      clients.push(f);
      return f;
    },
    probe ?? okProbe(version),
  );
  c.registerCommands();
  return { c, ctx, clients };
}

function statusText(): string {
  return String(stub.statusItems[0].text);
}

beforeEach(() => {
  stub.reset();
  workspace.workspaceFolders = undefined;
});

test("a wrong server path gives a clear error and no client", async () => {
  stub.settings.set("promptforge.server.path", "/nonexistent/forge-lsp");
  const { c, clients } = setup("0.1.0", (p, e) => probeServer(p, e));
  await c.start();
  assert.equal(clients.length, 0);
  assert.equal(c.state, "failed");
  const errors = stub.messages.filter((m) => m.level === "error");
  assert.equal(errors.length, 1);
  assert.match(errors[0].message, /'\/nonexistent\/forge-lsp' was not found/);
  assert.match(errors[0].message, /promptforge\.server\.path/);
  assert.deepEqual(errors[0].items, ["Open Settings", "Show Output"]);
  assert.match(statusText(), /\$\(error\)/);
  assert.match(String(stub.statusItems[0].tooltip), /was not found/);
  // Running while the server is down repeats the reason instead of failing silently.
  await c.runSection({ uri: "file:///p.md", section: "## A" });
  assert.match(stub.messages.at(-1)!.message, /was not found/);
});

test("start passes settings, key and trace to the client and shows the version", async () => {
  stub.settings.set("promptforge.gateway.url", "http://127.0.0.1:9/v1");
  stub.settings.set("promptforge.replay", "cassettes/run.json");
  stub.settings.set("promptforge.trace.server", "verbose");
  workspace.workspaceFolders = [{ uri: { fsPath: "/ws" } }];
  const { c, ctx, clients } = setup();
  await ctx.secrets.store(GATEWAY_KEY_SECRET, "sk-secret");
  await c.start();
  assert.equal(clients.length, 1);
  const o = clients[0].opts;
  assert.equal(o.command, "forge-lsp");
  assert.equal(o.env[GATEWAY_KEY_ENV], "sk-secret");
  assert.deepEqual(o.settings, {
    apiKeyEnv: GATEWAY_KEY_ENV,
    gatewayUrl: "http://127.0.0.1:9/v1",
    cassette: "/ws/cassettes/run.json",
  });
  assert.equal(o.trace, "verbose");
  assert.deepEqual(o.configurationFor("forge"), o.settings);
  assert.equal(o.configurationFor("editor"), null);
  assert.equal(c.state, "running");
  assert.equal(statusText(), "$(check) forge-lsp 0.1.0");
  assert.equal(stub.messages.length, 0);
});

test("changed settings reach the running server; a new server path restarts it", async () => {
  const { c, clients } = setup();
  await c.start();
  const change = (key: string) => stub.configListeners.fire({ affectsConfiguration: (s: string) => key === s || key.startsWith(s + ".") });
  stub.settings.set("promptforge.replay", "/tmp/c.jsonl");
  change("promptforge.replay");
  assert.deepEqual(clients[0].notifications, [{ method: "workspace/didChangeConfiguration", params: { settings: null } }]);
  assert.deepEqual(clients[0].opts.configurationFor("forge"), { apiKeyEnv: GATEWAY_KEY_ENV, cassette: "/tmp/c.jsonl" });
  change("editor.fontSize");
  assert.equal(clients[0].notifications.length, 1);
  // Clearing a setting the server was started with restarts it: an empty
  // value would not override its initializationOptions.
  stub.settings.set("promptforge.gateway.url", "http://127.0.0.1:1/v1");
  change("promptforge.gateway.url");
  assert.equal(clients.length, 1, "a new value is sent, no restart");
  assert.equal(clients[0].notifications.length, 2);
  await c.restart();
  assert.equal(clients.length, 2);
  stub.settings.set("promptforge.gateway.url", "");
  change("promptforge.gateway.url");
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(clients.length, 3);
  assert.deepEqual(clients[2].opts.settings, { apiKeyEnv: GATEWAY_KEY_ENV, cassette: "/tmp/c.jsonl" });
  stub.settings.set("promptforge.server.path", "/opt/forge-lsp");
  change("promptforge.server.path");
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(clients.length, 4);
  assert.equal(clients[2].stopped, true);
  assert.equal(clients[3].opts.command, "/opt/forge-lsp");
});

test("a different server version is shown as a warning", async () => {
  const { c } = setup("0.0.7");
  await c.start();
  assert.equal(c.state, "running");
  assert.equal(statusText(), "$(warning) forge-lsp 0.0.7");
  const w = stub.messages.filter((m) => m.level === "warning");
  assert.equal(w.length, 1);
  assert.match(w[0].message, /forge-lsp 0\.0\.7 is running but this extension expects 0\.1\.0/);
});

test("Set Gateway Key stores the key in secret storage and restarts with it", async () => {
  const { c, ctx, clients } = setup();
  await c.start();
  stub.inputAnswers.push("  sk-new  ");
  await stub.commands.get("promptforge.setGatewayKey")!();
  assert.equal(ctx.secretValues.get(GATEWAY_KEY_SECRET), "sk-new");
  assert.equal(stub.inputRequests[0].password, true);
  assert.equal(clients.length, 2);
  assert.equal(clients[0].stopped, true);
  assert.equal(clients[1].opts.env[GATEWAY_KEY_ENV], "sk-new");
  // Nothing about the key went to the settings.
  assert.equal([...stub.settings.keys()].some((k) => /key/i.test(k)), false);
  // An empty answer removes it.
  stub.inputAnswers.push("");
  await stub.commands.get("promptforge.setGatewayKey")!();
  assert.equal(ctx.secretValues.has(GATEWAY_KEY_SECRET), false);
  assert.equal(clients[2].opts.env[GATEWAY_KEY_ENV], process.env[GATEWAY_KEY_ENV]);
});

test("a lens run streams progress and the transcript and opens the result", async () => {
  const { c, clients } = setup();
  await c.start();
  const fake = clients[0];
  fake.answer = async (method, params) => {
    assert.equal(method, "workspace/executeCommand");
    const p = params as { command: string; arguments: unknown[]; workDoneToken: string };
    const report = fake.progress.get(p.workDoneToken)!;
    report({ kind: "begin", title: "Run ## Greet", message: "starting" });
    fake.opts.onLogMessage(4, `[forge run ${p.workDoneToken}] model round 1 in Greet (writer)\n<<< Hello, Ada!`);
    fake.opts.onLogMessage(4, "[forge run other-token] belongs to another client's run");
    fake.opts.onLogMessage(3, "untagged line during the run");
    report({ kind: "report", message: "Greet: model round 1" });
    report({ kind: "end", message: "done" });
    fake.opts.onShowMessage(3, "forge: Run ## Greet → Hello, Ada!");
    return { result: "Hello, Ada!", section: "## Greet" };
  };
  const args = { uri: "file:///w/greet.md", section: "## Greet" };
  await stub.commands.get("promptforge.runSection")!(args);
  assert.equal(fake.requests.length, 1);
  const p = fake.requests[0].params as { command: string; arguments: unknown[] };
  assert.equal(p.command, "forge.runSection");
  assert.deepEqual(p.arguments, [args]);
  const transcript = stub.channels.find((ch) => ch.name === "PromptForge Run")!;
  assert.deepEqual(transcript.lines, [
    "▶ Run ## Greet (greet.md)",
    "model round 1 in Greet (writer)\n<<< Hello, Ada!",
    "untagged line during the run",
    "[info] forge: Run ## Greet → Hello, Ada!",
    "■ Result (11 characters) opened in a new tab.",
  ]);
  assert.deepEqual(stub.progressReports, ["▶ Run ## Greet: starting", "Greet: model round 1", "■ done"]);
  const log = stub.channels.find((ch) => ch.name === "PromptForge")!;
  assert.ok(log.lines.includes("[log] [forge run other-token] belongs to another client's run"));
  // The result opens read-only (a virtual document), not as an Untitled
  // document that asks to be saved.
  assert.equal(stub.opened.length, 1);
  assert.equal(stub.opened[0].content, "Hello, Ada!");
  assert.equal(stub.opened[0].language, "markdown");
  assert.match(stub.opened[0].uri ?? "", /^promptforge-result:\/Result%20of%20.*Greet.*\.md\?\d+$/);
  assert.equal(stub.shownDocs.length, 1);
  assert.equal(fake.progress.size, 0, "progress handler disposed");
  // Outside a run, log messages go to the server log, not the transcript.
  assert.equal(stub.messages.length, 0, "no pop-up besides the result tab");
  fake.opts.onLogMessage(4, "idle message");
  assert.equal(transcript.lines.length, 5);
  assert.equal(log.lines.at(-1), "[log] idle message");
  // Outside a run, shown messages are pop-ups.
  fake.opts.onShowMessage(2, "something to look at");
  assert.deepEqual(stub.messages, [{ level: "warning", message: "something to look at", items: [] }]);
});

test("Run Section without arguments runs the section under the cursor", async () => {
  const { c, clients } = setup();
  await c.start();
  const fake = clients[0];
  const uri = "file:///w/p.md";
  const lens = (line: number, command: string, section?: string) => ({
    range: { start: { line, character: 0 }, end: { line, character: 5 } },
    command: { title: "▶", command, arguments: [{ uri, ...(section ? { section } : {}) }] },
  });
  fake.answer = async (method) => {
    if (method === "textDocument/codeLens") {
      return [lens(4, "forge.runPrompt"), lens(10, "forge.runSection", "## A"), lens(20, "forge.runSection", "### B"), lens(30, "forge.runSection", "## C")];
    }
    return "done";
  };
  window.activeTextEditor = {
    document: { languageId: "markdown", uri: { toString: () => uri } },
    selection: { active: { line: 25 } },
  };
  await stub.commands.get("promptforge.runSection")!();
  assert.equal(fake.requests[0].method, "textDocument/codeLens");
  assert.deepEqual(fake.requests[0].params, { textDocument: { uri } });
  assert.deepEqual((fake.requests[1].params as { arguments: unknown[] }).arguments, [{ uri, section: "### B" }]);
  // Above the first section there is nothing to run: say so.
  window.activeTextEditor = {
    document: { languageId: "markdown", uri: { toString: () => uri } },
    selection: { active: { line: 5 } },
  };
  await stub.commands.get("promptforge.runSection")!();
  assert.equal(fake.requests.length, 3);
  assert.match(stub.messages.at(-1)!.message, /not inside a runnable section/);
});

test("Run Prompt asks for the input; Escape aborts", async () => {
  const { c, clients } = setup();
  await c.start();
  const fake = clients[0];
  fake.answer = async () => ({ result: "ok" });
  stub.inputAnswers.push(undefined);
  await stub.commands.get("promptforge.runPrompt")!({ uri: "file:///w/p.md" });
  assert.equal(fake.requests.length, 0);
  stub.inputAnswers.push("Ada");
  await stub.commands.get("promptforge.runPrompt")!({ uri: "file:///w/p.md" });
  const p = fake.requests[0].params as { command: string; arguments: unknown[] };
  assert.equal(p.command, "forge.runPrompt");
  assert.deepEqual(p.arguments, [{ uri: "file:///w/p.md", input: "Ada" }]);
  assert.deepEqual(
    stub.opened.map((d) => [d.content, d.uri?.split(":")[0]]),
    [["ok", "promptforge-result"]],
  );
  // The last input is offered again.
  stub.inputAnswers.push(undefined);
  await stub.commands.get("promptforge.runPrompt")!({ uri: "file:///w/p.md" });
  assert.equal(stub.inputRequests[2].value, "Ada");
});

test("Cancel Run cancels the request and reports it", async () => {
  const { c, clients } = setup();
  await c.start();
  const fake = clients[0];
  let sawToken: vscode.CancellationToken | undefined;
  fake.answer = (_m, _p, token) =>
    new Promise((_resolve, reject) => {
      sawToken = token;
      token!.onCancellationRequested(() => reject(Object.assign(new Error("cancelled"), { code: -32800 })));
    });
  const running = stub.commands.get("promptforge.runSection")!({ uri: "file:///w/p.md", section: "## A" });
  await new Promise((r) => setImmediate(r));
  assert.match(statusText(), /running/);
  // A second run while one is active is refused with a message.
  await stub.commands.get("promptforge.runSection")!({ uri: "file:///w/p.md", section: "## B" });
  assert.match(stub.messages.at(-1)!.message, /still running/);
  stub.commands.get("promptforge.cancelRun")!();
  await running;
  assert.equal(sawToken!.isCancellationRequested, true);
  assert.match(stub.messages.at(-1)!.message, /cancelled/);
  assert.equal(stub.opened.length, 0);
  assert.equal(statusText(), "$(check) forge-lsp 0.1.0");
});

test("a failed run shows the server's error", async () => {
  const { c, clients } = setup();
  await c.start();
  clients[0].answer = () => Promise.reject(Object.assign(new Error("no model configured: set promptforge.gateway.url"), { code: -32603 }));
  await stub.commands.get("promptforge.runSection")!({ uri: "file:///w/p.md", section: "## A" });
  const e = stub.messages.at(-1)!;
  assert.equal(e.level, "error");
  assert.match(e.message, /run of ## A \(p\.md\) failed: no model configured/);
});

// Restricted Mode (docs/security.md#editors): runs are refused with a
// message naming Workspace Trust; nothing reaches the server.
test("Restricted Mode refuses runs", async () => {
  const { c, clients } = setup();
  await c.start();
  workspace.isTrusted = false;
  await stub.commands.get("promptforge.runSection")!({ uri: "file:///w/p.md", section: "## A" });
  await stub.commands.get("promptforge.runPrompt")!({ uri: "file:///w/p.md" });
  assert.equal(clients[0].requests.length, 0);
  assert.equal(stub.messages.length, 2);
  assert.match(stub.messages[0].message, /off in Restricted Mode.*Trust the workspace/);
});

// A workspace's .vscode/settings.json does not reach the server's gateway
// or live-tools settings; the user's own values do.
test("workspace values of user-only settings are ignored", async () => {
  stub.workspaceSettings.set("promptforge.gateway.url", "https://evil.example/v1");
  stub.workspaceSettings.set("promptforge.tests.liveTools", true);
  stub.workspaceSettings.set("promptforge.server.path", "bin/evil");
  stub.settings.set("promptforge.gateway.url", "https://mine.example/v1");
  const { c, clients } = setup();
  await c.start();
  assert.equal(clients[0].opts.command, "forge-lsp");
  assert.deepEqual(clients[0].opts.settings, { apiKeyEnv: GATEWAY_KEY_ENV, gatewayUrl: "https://mine.example/v1" });
});

test("lens commands are rewritten to the extension's commands", () => {
  const args = [{ uri: "file:///p.md", section: "## A" }];
  assert.deepEqual(rewriteLensCommand({ title: "▶ Run section", command: "forge.runSection", arguments: args }), {
    title: "▶ Run section",
    command: "promptforge.runSection",
    arguments: args,
  });
  assert.equal(rewriteLensCommand({ title: "x", command: "forge.runPrompt" }).command, "promptforge.runPrompt");
  assert.equal(rewriteLensCommand({ title: "x", command: "other" }).command, "other");
});

test("every contributed command is registered and vice versa", () => {
  setup();
  registerDebugger(makeContext() as never, () => undefined);
  registerTraceView();
  const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "..", "package.json"), "utf8"));
  const contributed = pkg.contributes.commands.map((c: { command: string }) => c.command).sort();
  assert.deepEqual([...stub.commands.keys()].sort(), contributed);
});

test("keepLens drops run, prompt and test lenses in Restricted Mode only", () => {
  for (const c of ["forge.runSection", "forge.runPrompt", "forge.runTest"]) {
    assert.equal(keepLens(c, false), false, c);
    assert.equal(keepLens(c, true), true, c);
  }
  assert.equal(keepLens("forge.showReferences", false), true);
  assert.equal(keepLens(undefined, false), true);
});

test("Show Rendered Prompt opens the server's rendering as a read-only document", async () => {
  const { c, clients } = setup();
  await c.start();
  const fake = clients[0];
  const markdown = "## `greet.md`\n\n1 model round\n\n### round 1 · ## Greet\n\nSay hello to ⟨args⟩.\n";
  fake.answer = async () => ({ markdown, text: "t", rounds: 1, tokens: 12, version: 3 });
  const args = { uri: "file:///w/greet.md", section: "## Greet" };
  await stub.commands.get("promptforge.showRenderedPrompt")!(args);
  assert.equal(fake.requests.length, 1);
  const p = fake.requests[0].params as { command: string; arguments: unknown[] };
  assert.equal(fake.requests[0].method, "workspace/executeCommand");
  assert.equal(p.command, "forge.renderPrompt");
  assert.deepEqual(p.arguments, [{ uri: "file:///w/greet.md", section: "## Greet", input: undefined }]);
  assert.equal(stub.opened.length, 1);
  assert.equal(stub.opened[0].content, markdown);
  assert.match(stub.opened[0].uri ?? "", /^promptforge-render:\/Rendered%20.*Greet.*\.md\?\d+$/);
  assert.equal(stub.shownDocs.length, 1);
  // A failure is shown, and nothing opens.
  fake.answer = async () => {
    throw new Error("forge: cannot render greet.md: not a prompt");
  };
  await stub.commands.get("promptforge.showRenderedPrompt")!(args);
  assert.equal(stub.opened.length, 1);
  assert.match(stub.messages.at(-1)?.message ?? "", /cannot render ## Greet \(greet\.md\): forge: cannot render greet\.md: not a prompt/);
});

test("a Show rendered prompt lens sits beside each run lens", () => {
  const section = { command: { command: "forge.runSection", arguments: [{ uri: "file:///w/p.md", section: "## A" }] } };
  assert.deepEqual(renderLensCommand(section), {
    title: "$(eye) Show rendered prompt",
    command: "promptforge.showRenderedPrompt",
    arguments: [{ uri: "file:///w/p.md", section: "## A" }],
  });
  const prompt = { command: { command: "forge.runPrompt", arguments: [{ uri: "file:///w/p.md" }] } };
  assert.deepEqual(renderLensCommand(prompt)?.arguments, [{ uri: "file:///w/p.md" }]);
  assert.equal(renderLensCommand({ command: { command: "forge.runTest", arguments: [{ uri: "file:///w/p.test.yaml" }] } }), undefined);
  assert.equal(renderLensCommand({ command: { command: "forge.runSection", arguments: [{ uri: "file:///w/p.md" }] } }), undefined);
});
