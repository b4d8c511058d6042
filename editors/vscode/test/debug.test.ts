// The promptforge debugger: launch-configuration completion, and the real
// `forge-lsp dap` driven by @vscode/debugadapter-testsupport's DebugClient,
// the way VS Code's own debug adapters are tested.
import { after, before, describe, test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { DebugClient } from "@vscode/debugadapter-testsupport";
import { debug, DebugAdapterExecutable, makeContext, stub, window } from "./vscode-stub";
import { debugLensCommand, launchForSection, resolveLaunch } from "../src/launch";
import { registerDebugger } from "../src/debug";
import { editReply, replyTarget, rerunSection } from "../src/whatif";
import { compareText, firstDifference } from "../src/tracemodel";
import { keptTraces, registerTraceView } from "../src/traceview";
import { serverBinary } from "./harness";

describe("launch configuration", () => {
  test("F5 without launch.json debugs the active prompt", () => {
    const r = resolveLaunch({}, "/w/p.md");
    assert.deepEqual(r.config, { type: "promptforge", request: "launch", name: "Debug prompt", stopOnEntry: true, program: "/w/p.md" });
  });
  test("a configuration keeps its program, or gets the active file", () => {
    assert.equal(resolveLaunch({ type: "promptforge", request: "launch", name: "x", program: "/a.md" }, "/b.md").config?.program, "/a.md");
    assert.equal(resolveLaunch({ type: "promptforge", request: "launch", name: "x" }, "/b.md").config?.program, "/b.md");
  });
  test("nothing to debug is refused with a reason", () => {
    const r = resolveLaunch({ type: "promptforge", request: "launch", name: "x" }, undefined);
    assert.equal(r.config, undefined);
    assert.match(r.problem ?? "", /open a prompt file/);
  });
});

describe("registerDebugger", () => {
  test("starts `forge-lsp dap` with the server binary and completes F5 on a prompt", async () => {
    stub.reset();
    registerDebugger(makeContext() as never, () => "/opt/forge-lsp");
    const exe = (await debug.factories.get("promptforge")!.createDebugAdapterDescriptor()) as DebugAdapterExecutable;
    assert.ok(exe instanceof DebugAdapterExecutable);
    assert.deepEqual([exe.command, exe.args], ["/opt/forge-lsp", ["dap"]]);
    (window as { activeTextEditor?: unknown }).activeTextEditor = { document: { languageId: "markdown", uri: { fsPath: "/w/p.md" } } };
    const cfg = (await debug.providers.get("promptforge")!.resolveDebugConfiguration(undefined, {})) as Record<string, unknown>;
    assert.equal(cfg.program, "/w/p.md");
    (window as { activeTextEditor?: unknown }).activeTextEditor = undefined;
    assert.equal(await debug.providers.get("promptforge")!.resolveDebugConfiguration(undefined, {}), undefined);
    assert.match(stub.messages.at(-1)?.message ?? "", /open a prompt file/);
  });
});

// Line numbers are file lines of PROMPT.
const PROMPT = [
  "---", "name: t", "description: d", "promptforge: 1", "---", "", // 1-6
  "# T", "", // 7
  "## Greet", "", // 9
  "```lua", // 11
  "local who = args", // 12
  "var.greeting = \"hello \" .. who", // 13
  "log(var.greeting)", // 14
  "return var.greeting", // 15
  "```", "",
].join("\n");

describe("forge-lsp dap with DebugClient", () => {
  let dc: DebugClient;
  let prog: string;

  before(async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "forge-dap-"));
    prog = path.join(fs.realpathSync(dir), "greet.md");
    fs.writeFileSync(prog, PROMPT);
    dc = new DebugClient(serverBinary(), "dap", "promptforge");
    await dc.start();
  });

  after(async () => {
    await dc.stop();
  });

  test("launch, a breakpoint hit, variables, evaluate and the result", async () => {
    await dc.hitBreakpoint({ program: prog, input: "Ann" }, { path: prog, line: 14 });
    const st = await dc.stackTraceRequest({ threadId: 1 });
    const frame = st.body.stackFrames[0];
    assert.equal(frame.name, "## Greet (lua)");
    const scopes = await dc.scopesRequest({ frameId: frame.id });
    const names = scopes.body.scopes.map((s) => s.name);
    assert.deepEqual(names, ["Locals", "Run", "var", "Globals", "Store", "Tools"]);
    const locals = await dc.variablesRequest({ variablesReference: scopes.body.scopes[0].variablesReference });
    assert.deepEqual(locals.body.variables.map((v) => [v.name, v.value]), [["who", "\"Ann\""]]);
    const vars = await dc.variablesRequest({ variablesReference: scopes.body.scopes[2].variablesReference });
    assert.deepEqual(vars.body.variables.map((v) => [v.name, v.value]), [["greeting", "\"hello Ann\""]]);
    const ev = await dc.evaluateRequest({ expression: "who .. '!'", frameId: frame.id, context: "repl" });
    assert.equal(ev.body.result, "\"Ann!\"");
    const outputs: { category?: string; output: string }[] = [];
    dc.on("output", (e) => outputs.push(e.body));
    const terminated = dc.waitForEvent("terminated");
    await dc.continueRequest({ threadId: 1 });
    await terminated;
    // The log line on the console, then the result, last, on stdout.
    assert.deepEqual(outputs.map((o) => [o.category, o.output]), [["console", "hello Ann\n"], ["stdout", "hello Ann\n"]]);
  });
});

describe("Debug section lens", () => {
  test("sits beside each server Run section lens and launches that section", () => {
    const run = { command: { title: "▶ Run section", command: "forge.runSection", arguments: [{ uri: "file:///w/p.md", section: "## Greet" }] } };
    const c = debugLensCommand(run);
    assert.deepEqual(c?.arguments, [{ uri: "file:///w/p.md", section: "## Greet" }]);
    assert.equal(c?.command, "promptforge.debugSection");
    assert.equal(debugLensCommand({ command: { title: "▶ Run prompt", command: "forge.runPrompt", arguments: [{ uri: "file:///w/p.md" }] } }), undefined);
    assert.deepEqual(launchForSection({ uri: "file:///w/p.md", section: "## Greet" }, "/w/p.md"), {
      type: "promptforge", request: "launch", name: "Debug ## Greet", program: "/w/p.md", section: "## Greet", stopOnEntry: true,
    });
  });
});

// TWO stops at line 17, in ## Count; comments are file lines.
const TWO = [
  "---", "name: l", "description: d", "promptforge: 1", "---", "", // 1-6
  "# L", "", // 7
  "## Setup", "", // 9
  "```lua", "var.step = 10", "```", "", // 11-14
  "## Count", "", // 15
  "```lua", // 17
  "local n = 3", // 18
  "return tostring(n * var.step)", // 19
  "```", "",
].join("\n");

describe("what if, with DebugClient", () => {
  let dc: DebugClient;
  let prog: string;

  before(async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "forge-whatif-"));
    prog = path.join(fs.realpathSync(dir), "two.md");
    fs.writeFileSync(prog, TWO);
    dc = new DebugClient(serverBinary(), "dap", "promptforge");
    await dc.start();
  });

  after(async () => {
    await dc.stop();
  });

  test("Set Value on a var key, then Re-run from this section, Step Back and the result", async () => {
    const init = await dc.initializeRequest();
    assert.equal(init.body?.supportsRestartFrame, true);
    assert.equal(init.body?.supportsStepBack, true);
    assert.equal(init.body?.supportsSetVariable, true);
    await dc.hitBreakpoint({ program: prog }, { path: prog, line: 18 });
    let frame = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames[0];
    const scopeRef = async (name: string) =>
      (await dc.scopesRequest({ frameId: frame.id })).body.scopes.find((s) => s.name === name)!.variablesReference;
    const set = await dc.setVariableRequest({ variablesReference: await scopeRef("var"), name: "step", value: "100" });
    assert.equal(set.body.value, "100");
    // The extension's "Re-run from this section", through the session's customRequest.
    const session = { customRequest: (command: string, args?: unknown) => dc.customRequest(command, args) };
    let stopped = dc.waitForEvent("stopped");
    await rerunSection(session, frame.id);
    assert.equal((await stopped).body.reason, "restart");
    frame = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames[0];
    assert.equal(frame.name, "## Count");
    const step = (await dc.variablesRequest({ variablesReference: await scopeRef("var") })).body.variables.find((v) => v.name === "step");
    assert.equal(step?.value, "100");
    stopped = dc.waitForEvent("stopped");
    await dc.continueRequest({ threadId: 1 });
    assert.equal((await stopped).body.reason, "breakpoint");
    stopped = dc.waitForEvent("stopped");
    await dc.stepBackRequest({ threadId: 1 });
    assert.equal((await stopped).body.reason, "step");
    frame = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames[0];
    assert.equal(frame.line, 15);
    const outputs: string[] = [];
    dc.on("output", (e) => {
      if (e.body.category === "stdout") outputs.push(e.body.output);
    });
    stopped = dc.waitForEvent("stopped");
    await dc.continueRequest({ threadId: 1 });
    await stopped;
    const terminated = dc.waitForEvent("terminated");
    await dc.continueRequest({ threadId: 1 });
    await terminated;
    // ## Count ran again from its entry with step = 100.
    assert.deepEqual(outputs, ["300\n"]);
  });
});

describe("Edit reply and re-run", () => {
  test("sets the Run scope's reply as a Lua string, then restarts the frame", async () => {
    const sent: [string, unknown][] = [];
    const session = { customRequest: async (c: string, a?: unknown) => { sent.push([c, a]); return {}; } };
    await editReply(session, { container: { variablesReference: 7 }, variable: { name: "reply", value: "\"old\"" } }, "new \"text\"", 1002);
    assert.deepEqual(sent, [
      ["setVariable", { variablesReference: 7, name: "reply", value: "\"new \\\"text\\\"\"" }],
      ["restartFrame", { frameId: 1002 }],
    ]);
    assert.equal(replyTarget({ container: { variablesReference: 7 }, variable: { name: "reply", value: "\"old\"" } }).current, "old");
    assert.throws(() => replyTarget({ container: { variablesReference: 7 }, variable: { name: "args", value: "\"x\"" } }), /pick `reply`/);
    await assert.rejects(rerunSection(session, undefined), /select a frame/);
  });
});

describe("Compare runs", () => {
  const ev = (o: Record<string, unknown>) => JSON.stringify(o);
  const runOf = (title: string, tone = "calm") =>
    [
      ev({ ev: "run.start", ms: 0, version: 1, path: "/w/p.md", input: "" }),
      ev({ ev: "var.write", ms: 0.2, line: 9, sectionId: 0, section: "T", varPath: "var.tone", value: JSON.stringify(tone) }),
      ev({ ev: "section.enter", ms: 0.4, sectionId: 1, section: "Third", address: "## Third", line: 29, depth: 0 }),
      ev({ ev: "block", ms: 0.5, line: 31, sectionId: 1, section: "Third", kind: "prose", text: `${title} summary` }),
      ev({ ev: "model.round", ms: 80 + title.length, line: 31, sectionId: 1, section: "Third", model: "m", round: 1, prompt: `${title} summary`, reply: "T", durationMs: 79 }),
      ev({ ev: "run.end", ms: 90, reply: "T" }),
    ].join("\n") + "\n";

  test("renders runs without timings and finds their first difference", () => {
    const a = compareText(runOf("Title for:"));
    const b = compareText(runOf("A short title for:"));
    assert.equal(compareText(runOf("Title for:")), a);
    assert.doesNotMatch(a, /80|79|ms/);
    assert.equal(firstDifference(a, a), -1);
    const i = firstDifference(a, b);
    assert.match(a.split("\n")[i], /prose block:31 sends "Title for: summary"/);
    assert.match(b.split("\n")[i], /"A short title for: summary"/);
    // A var change is where two runs first differ when it comes first.
    const c = compareText(runOf("Title for:", "angry"));
    const j = firstDifference(a, c);
    assert.match(a.split("\n")[j], /var\.tone:9 = "calm"/);
    assert.match(c.split("\n")[j], /var\.tone:9 = "angry"/);
  });

  test("the Compare Runs command opens both runs side by side at the first difference", async () => {
    stub.reset();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "forge-compare-"));
    const trace = path.join(dir, "s.jsonl");
    fs.writeFileSync(path.join(dir, "s.1.jsonl"), runOf("Title for:"));
    fs.writeFileSync(trace, runOf("A short title for:"));
    assert.deepEqual(keptTraces(trace), [path.join(dir, "s.1.jsonl")]);
    const tv = registerTraceView();
    await stub.commands.get("promptforge.compareRuns")!(path.join(dir, "s.1.jsonl"), trace);
    const diff = stub.executed.find((c) => c.id === "vscode.diff")!;
    const [left, right, title, opts] = diff.args as [{ fsPath: string; scheme: string }, { fsPath: string; scheme: string }, string, { selection: { start: { line: number } } }];
    assert.equal(left.scheme, "promptforge-run");
    assert.equal(title, "s.1.jsonl ↔ s.jsonl");
    const provider = stub.contentProviders.get("promptforge-run")!;
    const l = provider.provideTextDocumentContent(left) as string;
    const r = provider.provideTextDocumentContent(right) as string;
    assert.equal(opts.selection.start.line, firstDifference(l, r));
    assert.match(r.split("\n")[opts.selection.start.line], /A short title/);
    tv.disposables.forEach((d) => d.dispose());
  });
});
