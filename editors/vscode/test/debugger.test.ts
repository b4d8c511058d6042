// The run-trace view, and the debugger on a committed example: the real
// `forge-lsp dap` driven with @vscode/debugadapter-testsupport's DebugClient
// through a launch with a cassette and a trace file, breakpoint hits on a
// section heading and a Lua line, variables and the run's output; the trace
// that session wrote is then read back as the run-trace tree.
import { debug, makeContext, stub, Uri, views, window } from "./vscode-stub";
import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { DebugClient } from "@vscode/debugadapter-testsupport";
import type { DebugProtocol } from "@vscode/debugprotocol";
import { REPO, serverBinary } from "./harness";
import { parseTrace, TraceNode } from "../src/tracemodel";

const PROGRAM = path.join(REPO, "examples", "topics.md");
const CASSETTE = path.join(REPO, "examples", "cassettes", "topics", "one-paragraph-per-topic.jsonl");
// examples/topics.md: "## Plan" is line 14, `var.count = #topics` line 18.
const PLAN_LINE = 14;
const LUA_LINE = 18;

/** An environment without gateway settings: the run must come from the cassette. */
function offlineEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of Object.keys(env)) {
    if (k.startsWith("PROMPTFORGE_")) {
      delete env[k];
    }
  }
  return env;
}

async function topFrame(dc: DebugClient, threadId: number): Promise<DebugProtocol.StackFrame> {
  const st = await dc.stackTraceRequest({ threadId });
  assert.ok(st.body.stackFrames.length > 0, "a stopped thread has frames");
  return st.body.stackFrames[0];
}

async function variables(dc: DebugClient, ref: number): Promise<Map<string, DebugProtocol.Variable>> {
  const r = await dc.variablesRequest({ variablesReference: ref });
  return new Map(r.body.variables.map((v) => [v.name, v]));
}

test("DebugClient: launch with a cassette, stop at a heading and a Lua line, read variables", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "forge-dap-"));
  const trace = path.join(dir, "run.jsonl");
  const dc = new DebugClient(serverBinary(), "dap", "promptforge", { env: offlineEnv(), cwd: dir }, true);
  dc.defaultTimeout = 20000;
  await dc.start();
  try {
    const output: DebugProtocol.OutputEvent[] = [];
    dc.on("output", (e: DebugProtocol.OutputEvent) => output.push(e));
    const initialized = dc.waitForEvent("initialized");
    const init = await dc.initializeRequest();
    assert.equal(init.success, true);
    const launched = dc.launchRequest({ program: PROGRAM, replay: CASSETTE, trace } as DebugProtocol.LaunchRequestArguments);
    await initialized;
    const bps = await dc.setBreakpointsRequest({
      source: { path: PROGRAM },
      breakpoints: [{ line: PLAN_LINE }, { line: LUA_LINE }, { line: 2 }],
    });
    assert.deepEqual(
      bps.body.breakpoints.map((b) => [b.line, b.verified]),
      [
        [PLAN_LINE, true],
        [LUA_LINE, true],
        [2, false],
      ],
      "heading and Lua lines are verified, the frontmatter is not",
    );
    const stopped1 = dc.waitForEvent("stopped");
    await dc.configurationDoneRequest();
    await launched;

    // 1. The section heading: stopped on entry to ## Plan.
    const s1 = (await stopped1) as DebugProtocol.StoppedEvent;
    assert.equal(s1.body.reason, "breakpoint");
    const tid = s1.body.threadId ?? 1;
    const f1 = await topFrame(dc, tid);
    assert.equal(f1.line, PLAN_LINE);
    assert.equal(f1.source?.path, PROGRAM);
    assert.match(f1.name, /Plan/);

    // 2. The Lua line, with the block's local `topics` in scope.
    const stopped2 = dc.waitForEvent("stopped");
    await dc.continueRequest({ threadId: tid });
    const s2 = (await stopped2) as DebugProtocol.StoppedEvent;
    assert.equal(s2.body.reason, "breakpoint");
    const f2 = await topFrame(dc, s2.body.threadId ?? tid);
    assert.equal(f2.line, LUA_LINE);
    const scopes = (await dc.scopesRequest({ frameId: f2.id })).body.scopes;
    const names = scopes.map((s) => s.name);
    for (const want of ["Locals", "Run", "var", "Store", "Tools"]) {
      assert.ok(names.includes(want), `scope ${want} in ${names.join(", ")}`);
    }
    const locals = await variables(dc, scopes.find((s) => s.name === "Locals")!.variablesReference);
    const topics = locals.get("topics");
    assert.ok(topics, `the local topics is shown: ${[...locals.keys()].join(", ")}`);
    assert.ok(topics!.variablesReference > 0, "a table expands");
    const items = [...(await variables(dc, topics!.variablesReference)).values()].map((v) => v.value);
    assert.deepEqual(items, ['"pricing"', '"onboarding"', '"support load"']);
    const run = await variables(dc, scopes.find((s) => s.name === "Run")!.variablesReference);
    assert.ok(run.has("args"), `Run scope has args: ${[...run.keys()].join(", ")}`);
    const ev = await dc.evaluateRequest({ expression: "#topics", frameId: f2.id, context: "repl" });
    assert.equal(ev.body.result, "3");

    // 3. Continue to the end: the result on stdout, then terminated.
    const terminated = dc.waitForEvent("terminated");
    await dc.continueRequest({ threadId: s2.body.threadId ?? tid });
    await terminated;
    const stdout = output
      .filter((e) => e.body.category === "stdout")
      .map((e) => e.body.output)
      .join("");
    assert.match(stdout, /pricing[\s\S]*onboarding[\s\S]*support load/);
  } finally {
    await dc.stop();
  }

  // The session's trace, read back as the run-trace tree.
  const t = parseTrace(fs.readFileSync(trace, "utf8"));
  assert.deepEqual(t.problems, []);
  assert.equal(t.root.label, "topics.md");
  const plan = t.root.children.find((n) => n.label === "## Plan");
  assert.ok(plan, t.root.children.map((n) => n.label).join(", "));
  assert.equal(plan!.line, PLAN_LINE);
  const arms = plan!.children.filter((n) => n.kind === "section");
  assert.equal(arms.length, 3, "three fanout arms nest under ## Plan");
  const rounds = arms.flatMap((a) => a.children.filter((n) => n.kind === "model"));
  assert.equal(rounds.length, 3);
  assert.ok(rounds.every((r) => r.line === 35 && r.durationMs !== undefined && /writer-1/.test(r.label)));
});

test("parseTrace nests sections, counts tokens and keeps going past bad lines", () => {
  const lines = [
    { ev: "run.start", ms: 0, version: 1, path: "/p/greet.md", input: "Ann" },
    { ev: "section.enter", ms: 1, line: 7, section: "Greet" },
    { ev: "section.exit", ms: 2, line: 7, section: "Greet", durationMs: 1 },
    { ev: "section.enter", ms: 3, line: 13, sectionId: 1, section: "Main", address: "## Main" },
    { ev: "block", ms: 3, line: 15, endLine: 19, sectionId: 1, section: "Main", kind: "lua" },
    { ev: "store.write", ms: 3, line: 16, sectionId: 1, kind: "write", storePath: "notes.md", bytes: 5 },
    { ev: "section.enter", ms: 4, line: 50, sectionId: 2, section: "Helper", address: "## Helper", depth: 1 },
    { ev: "log", ms: 4, line: 52, sectionId: 2, message: "in helper" },
    { ev: "section.exit", ms: 5, line: 50, sectionId: 2, address: "## Helper", depth: 1, reply: "h", durationMs: 1.5 },
    { ev: "block", ms: 5, line: 23, endLine: 23, sectionId: 1, kind: "prose", text: "Say hi to Ann." },
    { ev: "model.round", ms: 90, line: 23, sectionId: 1, model: "writer-large", round: 1, toolCalls: 1, durationMs: 84.5, usage: { promptTokens: 12, completionTokens: 3 } },
    { ev: "tool.call", ms: 91, line: 23, sectionId: 1, alias: "echo", tool: "echo", args: '{"text":"x"}', result: "E:x", durationMs: 0.2 },
    { ev: "model.round", ms: 120, line: 23, sectionId: 1, model: "writer-large", round: 2, finishReason: "stop", durationMs: 28, totalTokens: 20 },
    { ev: "section.exit", ms: 121, line: 13, sectionId: 1, address: "## Main", durationMs: 118, error: "boom" },
    { ev: "run.end", ms: 122, error: "boom", errorKind: "Runtime", line: 23 },
  ].map((e) => JSON.stringify(e));
  lines.splice(3, 0, "not json", '{"no":"ev"}');
  const t = parseTrace(lines.join("\n") + "\n");
  assert.deepEqual(t.problems, ["line 4: not a JSON object", 'line 5: no "ev" field']);
  assert.equal(t.path, "/p/greet.md");
  const labels = (n: TraceNode): unknown => (n.children.length ? { [n.label]: n.children.map(labels) } : n.label);
  assert.deepEqual(labels(t.root), {
    "greet.md": [
      "# Greet",
      {
        "## Main": [
          "lua block",
          "store write notes.md",
          { "## Helper": ["log: in helper"] },
          "prose: Say hi to Ann.",
          "model round 1: writer-large",
          "tool echo",
          "model round 2: writer-large",
        ],
      },
      "error: boom",
    ],
  });
  const main = t.root.children[1];
  assert.equal(main.failed, true);
  assert.equal(main.description, "118 ms");
  const [r1, tool, r2] = main.children.slice(4);
  assert.equal(r1.tokens, 15);
  assert.equal(r1.description, "85 ms · 15 tokens · 1 tool call");
  assert.equal(r1.line, 23);
  assert.equal(tool.description, '0.20 ms · {"text":"x"}');
  assert.match(tool.detail, /result: E:x/);
  assert.equal(r2.description, "28 ms · 20 tokens · stop");
  assert.equal(t.root.tokens, 35);
  assert.equal(t.root.failed, true);
  assert.equal(t.root.children[2].description, "Runtime error");
  assert.equal(main.children[1].description, "5 bytes");
});

test("package.json contributes the run-trace view and its command", () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "..", "package.json"), "utf8"));
  assert.ok(pkg.contributes.views.debug.some((v: { id: string }) => v.id === "promptforge.runTrace"));
  assert.ok(pkg.contributes.commands.some((c: { command: string }) => c.command === "promptforge.openRunTrace"));
  assert.ok(pkg.contributes.menus["explorer/context"].some((m: { command: string }) => m.command === "promptforge.openRunTrace"));
  assert.ok(pkg.devDependencies["@vscode/debugadapter-testsupport"], "the test support is a devDependency");
  assert.equal(pkg.dependencies["@vscode/debugadapter-testsupport"], undefined);
});

test("the bundle gives every session a trace and shows it in the view when the session ends", async () => {
  stub.reset();
  stub.settings.set("promptforge.server.path", "/no/such/dir/forge-lsp");
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const ext = require(path.join(__dirname, "..", "..", "dist", "extension.js"));
  const ctx = makeContext();
  await ext.activate(ctx);
  try {
    assert.ok(stub.commands.has("promptforge.openRunTrace"));
    // F5 with no launch.json on the active prompt: a temporary trace file.
    window.activeTextEditor = { document: { languageId: "markdown", uri: { scheme: "file", fsPath: PROGRAM } } };
    const provider = debug.providers.get("promptforge")!;
    const cfg = (await provider.resolveDebugConfiguration(undefined, {})) as Record<string, string>;
    assert.equal(cfg.program, PROGRAM);
    assert.match(cfg.trace, /promptforge-debug-.*\.jsonl$/);
    const kept = (await provider.resolveDebugConfiguration(undefined, { program: PROGRAM, trace: "/w/t.jsonl" })) as Record<string, string>;
    assert.equal(kept.trace, "/w/t.jsonl", "a trace the configuration names is kept");

    // When a session ends, its trace is loaded into the view (and the
    // temporary file the provider chose is removed).
    const file = cfg.trace;
    fs.writeFileSync(
      file,
      [
        { ev: "run.start", version: 1, path: PROGRAM },
        { ev: "section.enter", line: 14, sectionId: 1, address: "## Plan" },
        { ev: "run.end", reply: "ok" },
      ]
        .map((e) => JSON.stringify(e))
        .join("\n"),
    );
    debug.terminated.fire({ type: "promptforge", configuration: { trace: file } });
    const view = views.get("promptforge.runTrace")!;
    const tree = view.treeDataProvider as {
      getChildren(n?: TraceNode): TraceNode[];
      getTreeItem(n: TraceNode): { label: string; command?: { command: string; arguments?: unknown[] } };
    };
    const [root] = tree.getChildren();
    assert.equal(root.label, "topics.md");
    const [plan] = tree.getChildren(root);
    const item = tree.getTreeItem(plan);
    assert.equal(item.label, "## Plan");
    assert.equal(item.command?.command, "vscode.open");
    const [uri, opts] = item.command!.arguments as [{ fsPath: string }, { selection: { start: { line: number } } }];
    assert.equal(uri.fsPath, PROGRAM);
    assert.equal(opts.selection.start.line, 13, "line 14 is 0-based 13");
    assert.equal(fs.existsSync(file), false, "the temporary trace is removed once shown");

    // Open Run Trace from the explorer: a trace file given as a Uri.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "forge-trace-"));
    const other = path.join(dir, "cli.jsonl");
    fs.writeFileSync(other, JSON.stringify({ ev: "run.start", version: 1, path: "/p/other.md" }) + "\n");
    await stub.commands.get("promptforge.openRunTrace")!(Uri.file(other));
    assert.equal(tree.getChildren()[0].label, "other.md");
  } finally {
    await ext.deactivate();
  }
});
