// Drives the real forge-lsp binary with the requests VS Code's language
// client sends for incremental text sync, semantic tokens and inlay hints:
// ranged didChange events with UTF-16 columns (multi-byte text and
// surrogate pairs), a refused out-of-range change, semanticTokens/full and
// /range decoded with the server's legend, and textDocument/inlayHint.
import { after, before, describe, test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileUri, serverBinary, Session, TESTDATA } from "./harness";

// The fixture is shared with the Neovim test (editors/neovim/test/features.lua).
const PROMPT = fs.readFileSync(path.join(TESTDATA, "features.md"), "utf8");

type Range = { start: { line: number; character: number }; end: { line: number; character: number } };

interface Legend {
  tokenTypes: string[];
  tokenModifiers: string[];
}

interface Token {
  line: number;
  char: number;
  length: number;
  type: string;
}

function decode(data: number[], legend: Legend): Token[] {
  const out: Token[] = [];
  let line = 0;
  let char = 0;
  for (let i = 0; i < data.length; i += 5) {
    if (data[i] > 0) {
      line += data[i];
      char = data[i + 1];
    } else {
      char += data[i + 1];
    }
    out.push({ line, char, length: data[i + 2], type: legend.tokenTypes[data[i + 3]] });
  }
  return out;
}

/** text of a token, by UTF-16 columns as LSP and VS Code count them. */
function tokenText(lines: string[], t: Token): string {
  return lines[t.line].slice(t.char, t.char + t.length);
}

/** Applies one LSP change to text the way VS Code's TextDocument does. */
function apply(text: string, r: Range, insert: string): string {
  const lines = text.split("\n");
  const offset = (p: { line: number; character: number }) => lines.slice(0, p.line).reduce((n, l) => n + l.length + 1, 0) + p.character;
  return text.slice(0, offset(r.start)) + insert + text.slice(offset(r.end));
}

function rangeOf(text: string, needle: string): Range {
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const c = lines[i].indexOf(needle);
    if (c >= 0) {
      return { start: { line: i, character: c }, end: { line: i, character: c + needle.length } };
    }
  }
  throw new Error(`${needle} not in the text`);
}

describe("incremental sync, semantic tokens and inlay hints", () => {
  let s: Session;
  let legend: Legend;
  let capabilities: Record<string, unknown>;
  const file = path.join(os.tmpdir(), "forge-features-test", "features.md");
  const uri = fileUri(file);
  let text = PROMPT;
  let version = 1;

  before(async () => {
    s = new Session(serverBinary(), {});
    capabilities = (await s.initialize({})).capabilities;
    legend = (capabilities.semanticTokensProvider as { legend: Legend }).legend;
    await s.open(file, text);
    await s.waitFor("first diagnostics", () => s.diagnostics.get(uri)?.find((d) => d.version === 1));
  });

  after(async () => {
    const { code } = await s.shutdown();
    assert.equal(code, 0, `server exit code; stderr:\n${s.stderr}`);
  });

  async function change(edits: { range: Range; text: string }[]): Promise<void> {
    version++;
    for (const e of edits) {
      text = apply(text, e.range, e.text);
    }
    // VS Code sends rangeLength too; the server ignores it (deprecated).
    await s.conn.sendNotification("textDocument/didChange", {
      textDocument: { uri, version },
      contentChanges: edits.map((e) => ({ range: e.range, rangeLength: 0, text: e.text })),
    });
  }

  async function tokens(): Promise<Token[]> {
    const res = await s.conn.sendRequest<{ data: number[] }>("textDocument/semanticTokens/full", { textDocument: { uri } });
    return decode(res.data, legend);
  }

  test("the server asks for incremental sync and offers semantic tokens and inlay hints", () => {
    assert.equal((capabilities.textDocumentSync as { change: number }).change, 2);
    assert.ok(legend.tokenTypes.includes("keyword") && legend.tokenTypes.includes("namespace"));
    assert.equal((capabilities.semanticTokensProvider as { range: boolean }).range, true);
    assert.ok(capabilities.inlayHintProvider);
  });

  test("ranged changes over multi-byte text and surrogate pairs keep the server's text equal to the editor's", async () => {
    // Two changes in one notification, on lines with an emoji before the
    // edit, so UTF-16, byte and code-point columns all differ.
    await change([
      { range: rangeOf(text, "héllo"), text: "hello 🎉" },
      { range: rangeOf(text, "log(note)"), text: "local unused = note" },
    ]);
    const v = version;
    const diags = await s.waitFor(`diagnostics of version ${v}`, () => s.diagnostics.get(uri)?.find((d) => d.version === v));
    const unused = diags.diagnostics.find((d) => d.code === "unused-local");
    assert.ok(unused, `an unused-local warning; got ${JSON.stringify(diags.diagnostics)}`);
    const lines = text.split("\n");
    assert.equal(lines[unused.range.start.line].slice(unused.range.start.character, unused.range.end.character), "unused");
    // Every keyword and string the server reports is where the editor has it.
    const toks = await tokens();
    const keywords = toks.filter((t) => t.type === "keyword").map((t) => tokenText(lines, t));
    assert.ok(keywords.length >= 2 && keywords.every((k) => k === "local"), `keywords ${keywords}`);
    const strings = toks.filter((t) => t.type === "string").map((t) => tokenText(lines, t));
    assert.ok(strings.includes('"😀 hello 🎉"'), `strings ${strings}`);
  });

  test("an out-of-range change is refused and the document stays as it was", async () => {
    const shown = s.shown.length;
    await s.conn.sendNotification("textDocument/didChange", {
      textDocument: { uri, version: version + 1 },
      contentChanges: [{ range: { start: { line: 400, character: 0 }, end: { line: 400, character: 1 } }, text: "x" }],
    });
    const msg = await s.waitFor("an error message", () => s.shown.slice(shown).find((m) => m.type === 1 && m.message.includes("not applied")));
    assert.match(msg.message, /line 401 is past the end/);
    // The next change is relative to the last good text.
    await change([{ range: rangeOf(text, "local unused = note"), text: "log(note)" }]);
    const v = version;
    const diags = await s.waitFor(`diagnostics of version ${v}`, () => s.diagnostics.get(uri)?.find((d) => d.version === v));
    assert.deepEqual(
      diags.diagnostics.map((d) => d.code),
      [],
    );
  });

  test("semantic tokens: API namespaces, aliases, placeholders; a range request agrees with the full result", async () => {
    const lines = text.split("\n");
    const toks = await tokens();
    const at = (needle: string) => {
      const r = rangeOf(text, needle);
      return toks.find((t) => t.line === r.start.line && t.char === r.start.character);
    };
    assert.equal(at("models.default")?.type, "namespace");
    assert.equal(at('"search", "web')?.type, "enumMember");
    assert.equal(at("args }}")?.type, "variable");
    const line = rangeOf(text, 'local note').start.line;
    const ranged = await s.conn.sendRequest<{ data: number[] }>("textDocument/semanticTokens/range", {
      textDocument: { uri },
      range: { start: { line, character: 0 }, end: { line, character: lines[line].length } },
    });
    assert.deepEqual(
      decode(ranged.data, legend),
      toks.filter((t) => t.line === line),
    );
  });

  test("inlay hints: the resolved tool and each prose block's token estimate", async () => {
    const hints = await s.conn.sendRequest<{ position: { line: number; character: number }; label: string }[]>("textDocument/inlayHint", {
      textDocument: { uri },
      range: { start: { line: 0, character: 0 }, end: { line: text.split("\n").length, character: 0 } },
    });
    const bind = rangeOf(text, 'tools.bind("search", "web search capability")');
    assert.ok(
      hints.some((h) => h.position.line === bind.end.line && h.position.character === bind.end.character && h.label === "→ web_search"),
      JSON.stringify(hints),
    );
    const prose = rangeOf(text, "Find news about {{ args }} 😀.");
    const tokensHint = hints.find((h) => h.position.line === prose.end.line && h.position.character === prose.end.character);
    assert.ok(tokensHint && /^≈ \d+ tokens/.test(tokensHint.label), JSON.stringify(hints));
  });
});
