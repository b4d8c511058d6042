// Unit tests of the pure logic: settings, server probing, run helpers and the grammar.
import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { adapterEnv, GATEWAY_CONFIG_ENV, GATEWAY_KEY_ENV, readSettings, resolvePath, serverEnv, serverSettings, USER_ONLY, userGetter } from "../src/config";
import { parseVersion, probeServer, versionWarning } from "../src/probe";
import { LensLike, progressLine, resultText, runArgsOf, runLabel, sectionLensAt, sectionLensNamed } from "../src/run";

test("readSettings applies defaults and rejects bad values", () => {
  assert.deepEqual(readSettings(() => undefined), {
    serverPath: "",
    gatewayUrl: "",
    gatewayConfig: "",
    replay: "",
    toolsFile: "",
    trace: "off",
    liveTools: false,
  });
  const s = readSettings((k) => ({ "server.path": "  ", "trace.server": "loud", "gateway.url": " http://x " })[k]);
  // Blank means unset: the bundled binary, then PATH.
  assert.equal(s.serverPath, "");
  assert.equal(s.trace, "off");
  assert.equal(s.gatewayUrl, "http://x");
});

test("promptforge.diagnostics.delay reaches the server as diagnosticsDelay", () => {
  const s = readSettings((k) => ({ "diagnostics.delay": 25 })[k]);
  assert.equal(s.diagnosticsDelay, 25);
  assert.deepEqual(serverSettings(s, "/ws"), { apiKeyEnv: GATEWAY_KEY_ENV, diagnosticsDelay: 25 });
  assert.equal(serverSettings(readSettings((k) => ({ "diagnostics.delay": 0 })[k]), "/ws").diagnosticsDelay, 0);
  for (const bad of [-1, "fast", Number.NaN]) {
    assert.equal(readSettings((k) => ({ "diagnostics.delay": bad })[k]).diagnosticsDelay, undefined, String(bad));
  }
});

test("resolvePath keeps bare commands for PATH lookup and resolves relative paths", () => {
  assert.equal(resolvePath("forge-lsp", "/ws", true), "forge-lsp");
  assert.equal(resolvePath("bin/forge-lsp", "/ws", true), "/ws/bin/forge-lsp");
  assert.equal(resolvePath("tools.json", "/ws", false), "/ws/tools.json");
  assert.equal(resolvePath("/abs/x", "/ws", true), "/abs/x");
  assert.equal(resolvePath("~/x", "/ws", true), path.join(os.homedir(), "x"));
});

test("serverSettings omits empty values and always names the key variable", () => {
  const base = readSettings(() => undefined);
  assert.deepEqual(serverSettings(base, "/ws"), { apiKeyEnv: GATEWAY_KEY_ENV });
  assert.deepEqual(serverSettings({ ...base, toolsFile: "t.json", replay: "/c.json" }, "/ws"), {
    apiKeyEnv: GATEWAY_KEY_ENV,
    toolsFile: "/ws/t.json",
    cassette: "/c.json",
  });
  // The gateway file is a user setting: relative to the home folder, never
  // the workspace (a repository could hold a file of that name).
  assert.deepEqual(serverSettings({ ...base, gatewayConfig: "pf/gateway.toml" }, "/ws"), {
    apiKeyEnv: GATEWAY_KEY_ENV,
    gatewayConfig: path.join(os.homedir(), "pf/gateway.toml"),
  });
});

test("adapterEnv passes the gateway file to the debug adapter", () => {
  const base = readSettings(() => undefined);
  assert.equal(adapterEnv(base), undefined);
  assert.deepEqual(adapterEnv({ ...base, gatewayConfig: "gw.toml" }), { [GATEWAY_CONFIG_ENV]: path.join(os.homedir(), "gw.toml") });
  assert.deepEqual(adapterEnv({ ...base, gatewayConfig: "/etc/gw.toml" }), { [GATEWAY_CONFIG_ENV]: "/etc/gw.toml" });
});

test("serverEnv adds the key without touching the base environment", () => {
  const base = { PATH: "/bin" };
  const env = serverEnv(base, "k");
  assert.equal(env[GATEWAY_KEY_ENV], "k");
  assert.equal(base.hasOwnProperty(GATEWAY_KEY_ENV), false);
  assert.equal(serverEnv({ [GATEWAY_KEY_ENV]: "from-env" }, undefined)[GATEWAY_KEY_ENV], "from-env");
});

test("parseVersion and versionWarning", () => {
  assert.equal(parseVersion("forge-lsp 0.1.0\n"), "0.1.0");
  assert.equal(parseVersion("forge-lsp v1.2.3-rc1\n"), "1.2.3-rc1");
  assert.equal(parseVersion("gopls v0.16.0"), undefined);
  assert.equal(versionWarning("0.1.0", "0.1.0"), undefined);
  assert.equal(versionWarning("0.1.0+dirty", "0.1.0"), undefined);
  assert.match(versionWarning("0.2.0", "0.1.0")!, /0\.2\.0 is running but this extension expects 0\.1\.0/);
  assert.match(versionWarning(undefined, "0.1.0")!, /did not report its version/);
});

function script(body: string, mode = 0o755): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "forge-probe-"));
  const p = path.join(dir, "fake-forge-lsp");
  fs.writeFileSync(p, `#!/bin/sh\n${body}\n`, { mode });
  return p;
}

test("probeServer explains every way the server path can be wrong", async () => {
  const missing = await probeServer("/definitely/not/here/forge-lsp");
  assert.equal(missing.ok, false);
  assert.match((missing as { message: string }).message, /was not found.*promptforge\.server\.path/);

  const notExec = await probeServer(script("echo forge-lsp 0.1.0", 0o644));
  assert.equal(notExec.ok, false);
  assert.match((notExec as { message: string }).message, /not executable/);

  const wrong = await probeServer(script("echo 'hello from something else'"));
  assert.equal(wrong.ok, false);
  assert.match((wrong as { message: string }).message, /does not look like forge-lsp/);

  const failing = await probeServer(script("echo 'boom: bad flag' >&2; exit 3"));
  assert.equal(failing.ok, false);
  assert.match((failing as { message: string }).message, /failed: boom: bad flag/);

  const hang = await probeServer(script("sleep 5"), undefined, 200);
  assert.equal(hang.ok, false);
  assert.match((hang as { message: string }).message, /did not answer/);

  assert.deepEqual(await probeServer(script("echo forge-lsp 0.0.9")), { ok: true, version: "0.0.9" });
});

const lens = (line: number, command: string, section?: string) => ({
  range: { start: { line } },
  command: { title: "▶", command, arguments: [{ uri: "file:///p.md", ...(section ? { section } : {}) }] },
});

const sec = (l: LensLike | undefined) => (l ? runArgsOf(l)?.section : undefined);

test("sectionLensAt picks the innermost section above the cursor", () => {
  const lenses = [lens(2, "forge.runPrompt"), lens(8, "forge.runSection", "## A"), lens(12, "forge.runSection", "### A1"), lens(20, "forge.runSection", "## B")];
  assert.equal(sectionLensAt(lenses, 1), undefined);
  assert.equal(sectionLensAt(lenses, 5), undefined, "the prompt lens is not a section");
  assert.equal(sec(sectionLensAt(lenses, 8)), "## A");
  assert.equal(sec(sectionLensAt(lenses, 15)), "### A1");
  assert.equal(sec(sectionLensAt(lenses, 99)), "## B");
  assert.equal(sec(sectionLensNamed(lenses, "a1")), "### A1");
  assert.equal(sec(sectionLensNamed(lenses, "## B")), "## B");
  assert.equal(sectionLensNamed(lenses, "Nope"), undefined);
});

test("resultText, progressLine and runLabel", () => {
  assert.equal(resultText("x"), "x");
  assert.equal(resultText({ result: "y", rounds: 2 }), "y");
  assert.equal(resultText({ a: 1 }), '{\n  "a": 1\n}');
  assert.equal(resultText(null), "");
  assert.equal(progressLine({ kind: "begin", title: "Run", message: "## A" }), "▶ Run: ## A");
  assert.equal(progressLine({ kind: "report", message: "round 1" }), "  round 1");
  assert.equal(progressLine({ kind: "end" }), undefined);
  assert.equal(runLabel({ uri: "file:///a/b%20c.md", section: "## X" }), "## X (b c.md)");
  assert.equal(runLabel({ uri: "file:///a/p.md" }), "p.md");
});

test("the injection grammar matches Lua fences and placeholders", () => {
  const g = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "..", "syntaxes", "promptforge.injection.tmLanguage.json"), "utf8"));
  const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "..", "package.json"), "utf8"));
  const contributed = pkg.contributes.grammars[0];
  assert.equal(contributed.scopeName, g.scopeName);
  assert.ok(fs.existsSync(path.join(__dirname, "..", "..", contributed.path)));
  assert.match(g.injectionSelector, /^L:text\.html\.markdown/);
  // The patterns are Oniguruma; the ones used here are also valid JavaScript.
  const begin = new RegExp(g.repository["lua-fence"].begin.replace(/\\G/g, ""));
  assert.ok(begin.test("```lua"));
  assert.ok(begin.test("   ~~~ lua title"));
  assert.ok(!begin.test("```luax"));
  assert.ok(!begin.test("```python"));
  assert.equal(g.repository["lua-fence"].patterns[0].include, "source.lua");
  const ph = new RegExp(g.repository.placeholder.match, "g");
  assert.deepEqual([..."Say {{ var.greeting }} to {{args}}".matchAll(ph)].map((m) => m[2]), ["var.greeting", "args"]);
  assert.deepEqual([..."escaped \\{{ x }} and { y }".matchAll(ph)], []);
});

// A workspace's .vscode/settings.json cannot pick the binary, the gateway
// (where the key goes) or live tools (docs/security.md#editors).
test("userGetter reads the binary, gateway and liveTools settings from the user only", () => {
  const global: Record<string, unknown> = { "gateway.url": "https://mine/v1" };
  const workspace: Record<string, unknown> = { "gateway.url": "https://evil/v1", "gateway.config": "evil.toml", "server.path": "./evil", "tests.liveTools": true, toolsFile: "t.json" };
  const cfg = {
    get: (k: string) => (k in workspace ? workspace[k] : global[k]),
    inspect: (k: string) => ({ globalValue: global[k], workspaceValue: workspace[k] }),
  };
  const s = readSettings(userGetter(cfg));
  assert.equal(s.gatewayUrl, "https://mine/v1");
  assert.equal(s.serverPath, "");
  assert.equal(s.gatewayConfig, "");
  assert.equal(s.liveTools, false);
  assert.equal(s.toolsFile, "t.json");
  assert.deepEqual(serverSettings({ ...s, liveTools: true }, "/ws").liveTools, true);
  assert.deepEqual([...USER_ONLY].sort(), ["gateway.config", "gateway.url", "server.path", "tests.liveTools"]);
});

test("package.json: user-only settings are machine-scoped; Restricted Mode is limited", () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "..", "package.json"), "utf8"));
  const props = pkg.contributes.configuration.properties;
  for (const k of USER_ONLY) {
    assert.equal(props[`promptforge.${k}`]?.scope, "machine", k);
  }
  const u = pkg.capabilities.untrustedWorkspaces;
  assert.equal(u.supported, "limited");
  assert.deepEqual(u.restrictedConfigurations, ["promptforge.replay", "promptforge.toolsFile"]);
  assert.match(u.description, /diagnostics, hover/);
});
