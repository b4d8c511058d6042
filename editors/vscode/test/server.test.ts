// Drives the real forge-lsp binary (FORGE_LSP_BIN, or built from this
// checkout) with vscode-jsonrpc through the same requests VS Code sends:
// initialize, didOpen, diagnostics, hover, code lenses and runs, including a
// run replayed from a cassette.
import { after, before, describe, test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { EXPECTED_SERVER_VERSION, probeServer } from "../src/probe";
import { LensLike, resultText, runArgsOf, sectionLensAt } from "../src/run";
import { isRenderReply, renderLensCommand } from "../src/render";
import { CancellationTokenSource } from "vscode-jsonrpc/node";
import { FakeGateway, serverBinary, Session } from "./harness";
import { GATEWAY_KEY_ENV } from "../src/config";

type Hover = { contents: unknown } | null;

function hoverText(h: Hover): string {
  if (!h) {
    return "";
  }
  const c = h.contents as unknown;
  const one = (x: unknown): string => (typeof x === "string" ? x : (x as { value?: string }).value ?? "");
  return Array.isArray(c) ? c.map(one).join("\n") : one(c);
}

describe("forge-lsp over stdio", () => {
  let s: Session;
  let bin: string;

  before(async () => {
    bin = serverBinary();
    s = new Session(bin, {});
  });

  after(async () => {
    const { code, exitedOnExit } = await s.shutdown();
    assert.equal(code, 0, `server exit code after shutdown/exit; stderr:\n${s.stderr}`);
    assert.ok(exitedOnExit, "forge-lsp must exit on the exit notification, before its stdin is closed");
  });

  test("`forge-lsp version` matches the version the extension expects", async () => {
    assert.deepEqual(await probeServer(bin), { ok: true, version: EXPECTED_SERVER_VERSION });
  });

  test("initialize reports serverInfo and the run commands", async () => {
    const init = await s.initialize({ apiKeyEnv: GATEWAY_KEY_ENV });
    assert.equal(init.serverInfo?.name, "forge-lsp");
    assert.equal(init.serverInfo?.version, EXPECTED_SERVER_VERSION);
    const exec = init.capabilities.executeCommandProvider as { commands: string[] };
    assert.deepEqual([...exec.commands].sort(), ["forge.renderPrompt", "forge.runPrompt", "forge.runSection", "forge.runTest"]);
    assert.ok(init.capabilities.hoverProvider);
    assert.ok(init.capabilities.codeLensProvider);
  });

  test("diagnostics for a prompt with known problems carry codes and lines", async () => {
    const uri = await s.open("problems.md");
    // The workspace scan may publish the file as it is on disk (version 0)
    // before the open document's own diagnostics arrive: wait for version 1.
    const got = await s.waitFor("diagnostics for problems.md", () => {
      const list = s.diagnostics.get(uri);
      return list?.find((d) => d.version === 1 && d.diagnostics.length > 0);
    });
    assert.equal(got.version, 1, "diagnostics are stamped with the document version");
    const found = got.diagnostics.map((d) => `${d.code}@${d.range.start.line + 1}`);
    // Line numbers are 1-based here, as an editor shows them.
    for (const want of ["upstream-spelling@10", "lua-syntax@16"]) {
      assert.ok(found.includes(want), `want ${want} among ${found.join(", ")}`);
    }
    const syntax = got.diagnostics.find((d) => d.code === "lua-syntax")!;
    assert.equal(syntax.severity, 1, "lua-syntax is an error");
    assert.match(syntax.message, /Lua 5\.1/);
    // Fixing the problem clears it: full sync with the corrected text.
    const fixed = fs.readFileSync(path.join(__dirname, "..", "..", "..", "testdata", "problems.md"), "utf8").replace("10 // 2", "math.floor(10 / 2)");
    await s.conn.sendNotification("textDocument/didChange", {
      textDocument: { uri, version: 2 },
      contentChanges: [{ text: fixed }],
    });
    const after2 = await s.waitFor("diagnostics for version 2", () => s.diagnostics.get(uri)!.find((d) => d.version === 2));
    assert.equal(after2.diagnostics.some((d) => d.code === "lua-syntax"), false);
    await s.conn.sendNotification("textDocument/didClose", { textDocument: { uri } });
    const cleared = await s.waitFor("diagnostics cleared on close", () => {
      const last = s.diagnostics.get(uri)!.at(-1)!;
      return last.diagnostics.length === 0 ? last : undefined;
    });
    assert.deepEqual(cleared.diagnostics, []);
  });

  test("Markdown without promptforge frontmatter gets nothing", async () => {
    const uri = await s.open("plain.md");
    const lenses = await s.conn.sendRequest<LensLike[] | null>("textDocument/codeLens", { textDocument: { uri } });
    assert.equal((lenses ?? []).length, 0);
    const hover = await s.conn.sendRequest<Hover>("textDocument/hover", { textDocument: { uri }, position: { line: 5, character: 8 } });
    assert.equal(hoverText(hover), "");
    const published = (s.diagnostics.get(uri) ?? []).flatMap((p) => p.diagnostics);
    assert.deepEqual(published, [], "no diagnostics for plain Markdown");
  });

  test("hover on a Lua API call shows its documentation", async () => {
    const uri = await s.open("problems.md", undefined, 3);
    // Line 10 (0-based 9): tools.need("search", ...); the cursor is on "need".
    const h = await s.conn.sendRequest<Hover>("textDocument/hover", { textDocument: { uri }, position: { line: 9, character: 7 } });
    const text = hoverText(h);
    assert.match(text, /tools\.(need|bind)/);
  });

  test("code lenses: one Run prompt on the H1 and one Run section per section", async () => {
    const uri = await s.open("pure.md");
    const lenses = (await s.conn.sendRequest<LensLike[] | null>("textDocument/codeLens", { textDocument: { uri } })) ?? [];
    const summary = lenses.map((l) => `${l.range.start.line + 1} ${l.command?.title} ${l.command?.command} ${runArgsOf(l)?.section ?? "-"}`);
    assert.deepEqual(summary.sort(), [
      "15 ▶ Run section forge.runSection ## Shout",
      "7 ▶ Run prompt forge.runPrompt -",
      "9 ▶ Run section forge.runSection ## Answer",
    ]);
    for (const l of lenses) {
      assert.equal(runArgsOf(l)?.uri, uri);
    }
  });

  test("running a section without a model returns its result, with progress", async () => {
    const uri = await s.open("pure.md", undefined, 2);
    const lenses = (await s.conn.sendRequest<LensLike[]>("textDocument/codeLens", { textDocument: { uri } })) ?? [];
    // As the extension does for "Run Section" from the palette: the section under the cursor (line 12).
    const args = runArgsOf(sectionLensAt(lenses, 11)!)!;
    assert.equal(args.section, "## Answer");
    const token = "test-run-1";
    const result = await s.conn.sendRequest("workspace/executeCommand", { command: "forge.runSection", arguments: [args], workDoneToken: token });
    assert.equal(resultText(result), "ok");
    const kinds = s.progress.filter((p) => p.token === token).map((p) => p.value.kind);
    assert.equal(kinds[0], "begin");
    assert.equal(kinds.at(-1), "end");
  });

  test("Show rendered prompt: the server renders the section the lens names, slots for the unknowns", async () => {
    const uri = await s.open("model.md", undefined, 6);
    const lenses = (await s.conn.sendRequest<LensLike[]>("textDocument/codeLens", { textDocument: { uri } })) ?? [];
    const lens = lenses.find((l) => runArgsOf(l)?.section === "## Greet")!;
    const c = renderLensCommand(lens)!;
    assert.equal(c.command, "promptforge.showRenderedPrompt");
    const reply = await s.conn.sendRequest("workspace/executeCommand", { command: "forge.renderPrompt", arguments: c.arguments });
    assert.ok(isRenderReply(reply), JSON.stringify(reply));
    assert.equal(reply.rounds, 2, reply.markdown);
    assert.match(reply.markdown, /### round 2 · ## Greet/);
    assert.ok(reply.markdown.includes("Say hello to ⟨args⟩ in at most five words."), reply.markdown);
  });

  test("a run uses the unsaved buffer, not the file on disk", async () => {
    const p = path.join(__dirname, "..", "..", "..", "testdata", "pure.md");
    const uri = await s.open("pure.md", undefined, 4);
    const edited = fs.readFileSync(p, "utf8").replace('string.upper("forge")', 'string.upper("edited")');
    await s.conn.sendNotification("textDocument/didChange", { textDocument: { uri, version: 5 }, contentChanges: [{ text: edited }] });
    const result = await s.conn.sendRequest("workspace/executeCommand", {
      command: "forge.runSection",
      arguments: [{ uri, section: "## Shout" }],
    });
    assert.equal(resultText(result), "EDITED");
  });

  test("$/cancelRequest stops a run and the server keeps answering", async () => {
    // spin.md loops on string work: few Lua instructions, so no quota ends it first.
    const uri = await s.open("spin.md");
    const cts = new CancellationTokenSource();
    const token = "spin";
    const run = s.conn.sendRequest(
      "workspace/executeCommand",
      { command: "forge.runSection", arguments: [{ uri, section: "## Forever" }], workDoneToken: token },
      cts.token,
    );
    await s.waitFor("the run to begin", () => s.progress.find((p) => p.token === token && p.value.kind === "begin"));
    cts.cancel();
    const outcome = await Promise.race([
      run.then(
        () => "resolved",
        (err: Error & { code?: number }) => (err.code === -32800 || /cancel/i.test(err.message) ? "cancelled" : `failed: ${err.message}`),
      ),
      new Promise((resolve) => setTimeout(() => resolve("still running 10 s after $/cancelRequest"), 10000)),
    ]);
    assert.equal(outcome, "cancelled");
    const lenses = await s.conn.sendRequest<LensLike[]>("textDocument/codeLens", { textDocument: { uri } });
    assert.equal(lenses.length, 2);
  });

  test("a failing run is an error reply that says what went wrong", async () => {
    const uri = await s.open(path.join(os.tmpdir(), "forge-fail-test.md"), "---\nname: fail\ndescription: Fails on purpose.\npromptforge: 1\n---\n\n# Fail\n\n## Boom\n\n```lua\nerror(\"boom from the test\")\n```\n");
    await assert.rejects(
      s.conn.sendRequest("workspace/executeCommand", { command: "forge.runSection", arguments: [{ uri, section: "## Boom" }] }),
      (err: Error) => /boom from the test/.test(err.message),
    );
  });
});

describe("runs with a model: live fake gateway, then replayed from a cassette", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "forge-cassette-"));
  const cassette = path.join(dir, "greet.jsonl");
  const gw = new FakeGateway((body) => {
    const last = body.messages?.filter((m) => m.role === "user").at(-1)?.content ?? "";
    return /Ada/.test(last) ? "Hello there, Ada!" : "Hello, stranger.";
  });

  after(() => gw.close());

  test("live run against a gateway on loopback", async () => {
    const url = await gw.listen();
    const s = new Session(serverBinary(), { gatewayUrl: url }, { ...process.env, [GATEWAY_KEY_ENV]: "test-key" });
    try {
      await s.initialize({ gatewayUrl: url, apiKeyEnv: GATEWAY_KEY_ENV });
      const uri = await s.open("model.md");
      const result = await s.conn.sendRequest("workspace/executeCommand", {
        command: "forge.runSection",
        arguments: [{ uri, section: "## Greet", input: "Ada" }],
        workDoneToken: "live",
      });
      assert.equal(resultText(result), "Hello there, Ada!");
      assert.ok(gw.exchanges.some((e) => e.endpoint === "chat/completions"), "the gateway saw a chat completion");
    } finally {
      await s.shutdown();
    }
    gw.writeCassette(cassette);
    // .ci/editors.sh hands the cassette to the Neovim test.
    if (process.env.FORGE_CASSETTE_OUT) {
      fs.copyFileSync(cassette, process.env.FORGE_CASSETTE_OUT);
    }
  });

  test("the same run replayed from the cassette, with no gateway", async () => {
    const seen = gw.exchanges.length;
    await gw.close();
    const env = { ...process.env };
    delete env[GATEWAY_KEY_ENV];
    const s = new Session(serverBinary(), { cassette }, env);
    try {
      await s.initialize({ cassette, apiKeyEnv: GATEWAY_KEY_ENV });
      const uri = await s.open("model.md");
      const result = await s.conn.sendRequest("workspace/executeCommand", {
        command: "forge.runSection",
        arguments: [{ uri, section: "## Greet", input: "Ada" }],
        workDoneToken: "replay",
      });
      assert.equal(resultText(result), "Hello there, Ada!");
      assert.equal(gw.exchanges.length, seen);
      // The transcript shows the model round.
      assert.ok(s.logs.some((l) => /Hello there, Ada!/.test(l.message)), `transcript: ${JSON.stringify(s.logs)}`);
      // A different input is not in the cassette: the run fails and says why.
      await assert.rejects(
        s.conn.sendRequest("workspace/executeCommand", { command: "forge.runSection", arguments: [{ uri, section: "## Greet", input: "Bob" }] }),
        (err: Error) => /replay diverged|cassette/.test(err.message),
      );
    } finally {
      await s.shutdown();
    }
  });
});
