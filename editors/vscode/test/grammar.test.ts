// Tokenizes prompts with vscode-textmate and Oniguruma (the engine VS Code
// uses), the Markdown and Lua grammars VS Code ships (from tm-grammars), and
// this extension's injection grammar, then checks the scopes a theme sees.
import { before, test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import * as vsctm from "vscode-textmate";
import * as oniguruma from "vscode-oniguruma";

const ext = path.join(__dirname, "..", "..");
const grammarFiles: Record<string, string> = {
  "text.html.markdown": require.resolve("tm-grammars/grammars/markdown.json"),
  "source.lua": require.resolve("tm-grammars/grammars/lua.json"),
  "promptforge.injection": path.join(ext, "syntaxes", "promptforge.injection.tmLanguage.json"),
};

let markdown: vsctm.IGrammar;

before(async () => {
  const wasm = fs.readFileSync(require.resolve("vscode-oniguruma/release/onig.wasm"));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const pkg = JSON.parse(fs.readFileSync(path.join(ext, "package.json"), "utf8"));
  const contributed = pkg.contributes.grammars[0] as { scopeName: string; injectTo: string[] };
  const registry = new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns: string[]) => new oniguruma.OnigScanner(patterns),
      createOnigString: (s: string) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scope: string) => {
      const file = grammarFiles[scope];
      return file ? vsctm.parseRawGrammar(fs.readFileSync(file, "utf8"), file) : null;
    },
    // As VS Code does for a grammar contributed with "injectTo".
    getInjections: (scope: string) => (contributed.injectTo.includes(scope) ? [contributed.scopeName] : undefined),
  });
  const g = await registry.loadGrammar("text.html.markdown");
  assert.ok(g, "markdown grammar loaded");
  markdown = g;
});

interface Tok {
  line: number;
  text: string;
  scopes: string[];
}

function tokenize(src: string): Tok[] {
  let stack = vsctm.INITIAL;
  const out: Tok[] = [];
  src.split("\n").forEach((line, i) => {
    const r = markdown.tokenizeLine(line, stack);
    for (const t of r.tokens) {
      out.push({ line: i, text: line.slice(t.startIndex, t.endIndex), scopes: t.scopes });
    }
    stack = r.ruleStack;
  });
  return out;
}

function scopesOf(toks: Tok[], line: number, text: string): string[] {
  const t = toks.find((x) => x.line === line && x.text.trim() === text);
  assert.ok(t, `no token ${JSON.stringify(text)} on line ${line}: ${JSON.stringify(toks.filter((x) => x.line === line).map((x) => x.text))}`);
  return t.scopes;
}

const prompt = [
  "# Greet", //                                   0
  "", //                                          1
  "```lua", //                                    2
  'local t = {{ "nested table" }}', //           3
  "return args", //                               4
  "```", //                                       5
  "", //                                          6
  "Say hello to {{ args }} and {{var.name}}.", // 7
  "Inline `{{ not_a_placeholder }}` stays code.", // 8
  "", //                                          9
  "```python", //                                 10
  "x = '{{ py }}'", //                            11
  "```", //                                       12
  "Escaped \\{{ literal }} text.", //             13
].join("\n");

test("placeholders in prose get the placeholder scopes", () => {
  const toks = tokenize(prompt);
  assert.ok(scopesOf(toks, 7, "{{").includes("punctuation.definition.template-expression.begin.promptforge"));
  assert.ok(scopesOf(toks, 7, "args").includes("variable.other.placeholder.promptforge"));
  assert.ok(scopesOf(toks, 7, "var.name").includes("variable.other.placeholder.promptforge"));
  assert.ok(scopesOf(toks, 7, "}}").includes("punctuation.definition.template-expression.end.promptforge"));
  assert.ok(scopesOf(toks, 7, "Say hello to").includes("text.html.markdown"));
});

test("Lua fences are highlighted as embedded Lua", () => {
  const toks = tokenize(prompt);
  const ret = scopesOf(toks, 4, "return");
  assert.ok(ret.includes("meta.embedded.block.lua.promptforge"), ret.join(" "));
  assert.ok(ret.some((s) => s.startsWith("keyword") && s.endsWith(".lua")), ret.join(" "));
  assert.ok(scopesOf(toks, 2, "lua").includes("fenced_code.block.language.markdown"));
});

test("no placeholders inside Lua, other fences, inline code or after a backslash", () => {
  const toks = tokenize(prompt);
  const placeholderLines = new Set(toks.filter((t) => t.scopes.some((s) => s.endsWith(".promptforge") && s.includes("template-expression"))).map((t) => t.line));
  assert.deepEqual([...placeholderLines], [7]);
});
