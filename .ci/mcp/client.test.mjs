// Drives `forge-lsp mcp` with the official MCP TypeScript SDK client, over
// stdio and over streamable HTTP with a bearer token, against a scripted
// gateway served by this file. FORGE_LSP_BIN names the binary.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, mkdirSync, writeFileSync, rmSync, unlinkSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { PromptListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const bin = process.env.FORGE_LSP_BIN;
const GW_KEY = "ci-gateway-key-5f3a9c";
const TOKEN = "ci-bearer-token-81b2d7";

const echo = `---
name: echo
description: Return the input upper-cased with no model call
promptforge: 1
---

# Echo

## Shout

\`\`\`lua
return string.upper(args)
\`\`\`
`;

const ask = `---
name: ask
description: Answer a question with one model call
promptforge: 1
---

# Ask

\`\`\`lua
models.default("m", "a general assistant model")
\`\`\`

## Answer

Reply to: {{ args }}
`;

let dir, gateway, gatewayURL;
const seen = []; // Authorization headers the gateway received

before(async () => {
  assert.ok(bin, "FORGE_LSP_BIN must name the forge-lsp binary");
  dir = mkdtempSync(join(tmpdir(), "forge-mcp-"));
  mkdirSync(join(dir, "prompts"));
  writeFileSync(join(dir, "prompts", "echo.md"), echo);
  writeFileSync(join(dir, "prompts", "ask.md"), ask);
  gateway = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      seen.push(req.headers.authorization ?? "");
      res.setHeader("Content-Type", "application/json");
      if (req.headers.authorization !== `Bearer ${GW_KEY}`) {
        res.writeHead(401).end(JSON.stringify({ error: { message: "bad key", type: "unauthorized" } }));
        return;
      }
      if (req.method === "GET" && req.url === "/v1/models") {
        res.end(JSON.stringify({ object: "list", data: [{ id: "test-model", object: "model", description: "A general assistant model for tests", context: 8192, thinking: "never", tool_dialect: "openai" }] }));
        return;
      }
      if (req.method === "POST" && req.url === "/v1/chat/completions") {
        const chat = JSON.parse(body);
        const last = chat.messages[chat.messages.length - 1].content;
        // A model takes a while: the progress of the sections before the
        // reply reaches the client well before the answer (the SDK
        // client drops a notification it handles after the answer).
        setTimeout(() => res.end(JSON.stringify({ id: "c1", object: "chat.completion", model: chat.model, choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: `scripted answer to: ${last.trim()}` } }] })), 200);
        return;
      }
      res.writeHead(404).end(JSON.stringify({ error: { message: "no route", type: "not_found" } }));
    });
  });
  await new Promise((r) => gateway.listen(0, "127.0.0.1", r));
  gatewayURL = `http://127.0.0.1:${gateway.address().port}/v1`;
  writeFileSync(join(dir, "prompts.toml"), `[server]
api_key = "\${PROMPTFORGE_MCP_SERVER_API_KEY}"
reply_deadline = "20s"

[paths]
prompts = "${join(dir, "prompts")}"

[catalog]
include = ["**/*.md"]
`);
});

// The gateway, its key and the bearer token are the user's: they come from
// the server's environment, never from prompts.toml (docs/security.md).
function serverEnv() {
  const env = { ...process.env, PROMPTFORGE_MCP_SERVER_API_KEY: TOKEN, PROMPTFORGE_GATEWAY_URL: gatewayURL, PROMPTFORGE_GATEWAY_API_KEY: GW_KEY };
  delete env.PROMPTFORGE_GATEWAY_CONFIG;
  return env;
}

after(() => {
  gateway?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function text(result) {
  return result.content.filter((c) => c.type === "text").map((c) => c.text).join("");
}

async function exercise(client) {
  const tools = (await client.listTools()).tools.map((t) => t.name).sort();
  assert.deepEqual(tools, ["check_prompt", "check_run", "list_prompts", "lookup_docs", "need_prompt", "outline_prompt", "run_prompt", "run_tests"]);

  const list = await client.callTool({ name: "list_prompts", arguments: {} });
  assert.deepEqual(list.structuredContent.prompts.map((p) => p.name), ["ask", "echo"]);

  const progress = [];
  const run = await client.callTool(
    { name: "run_prompt", arguments: { prompt: "ask", args: "why is the sky blue" } },
    undefined,
    { onprogress: (p) => progress.push(p) },
  );
  const r = run.structuredContent;
  assert.equal(r.status, "completed", JSON.stringify(r));
  assert.match(r.value, /^scripted answer to: Reply to: why is the sky blue/);
  assert.equal(r.turns, 1);
  assert.equal(r.error, null);
  assert.match(r.run_id, /^[0-9a-f]{32}$/);
  assert.ok(progress.length > 0, "no progress notification for a call with a progressToken");

  const collected = await client.callTool({ name: "check_run", arguments: { run_id: r.run_id } });
  assert.equal(collected.structuredContent.value, r.value);

  const wrong = await client.callTool({ name: "run_prompt", arguments: { prompt: "eco" } });
  assert.equal(wrong.isError, true);
  assert.match(text(wrong), /closest first: echo, ask/);

  const need = await client.callTool({ name: "need_prompt", arguments: { capability: "Answer a question." } });
  assert.equal(need.structuredContent.prompts[0].name, "ask");

  const check = await client.callTool({ name: "check_prompt", arguments: { path: "echo.md", text: echo.replace("return string.upper(args)", "return string.upper(args") } });
  assert.ok(check.structuredContent.errors > 0, JSON.stringify(check.structuredContent));

  const doc = await client.callTool({ name: "lookup_docs", arguments: { name: "tools.bind" } });
  assert.equal(doc.structuredContent.kind, "api");

  const outline = await client.callTool({ name: "outline_prompt", arguments: { path: "echo.md" } });
  assert.equal(outline.structuredContent.outline.at(-1).name, "## Shout", JSON.stringify(outline.structuredContent));

  for (const out of [JSON.stringify(run), JSON.stringify(collected), JSON.stringify(check)]) {
    assert.ok(!out.includes(GW_KEY) && !out.includes(TOKEN), "a secret in a result");
  }
}

// A hung server must not hang CI.
const limit = { timeout: 60000 };

test("stdio", limit, async () => {
  const transport = new StdioClientTransport({
    command: bin,
    args: ["mcp", "--stdio", join(dir, "prompts.toml")],
    env: serverEnv(),
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (d) => (stderr += d));
  const client = new Client({ name: "ci", version: "1" });
  await client.connect(transport);
  try {
    await exercise(client);
  } catch (err) {
    err.message += `\nserver stderr:\n${stderr}`;
    throw err;
  } finally {
    await client.close();
  }
  assert.ok(seen.includes(`Bearer ${GW_KEY}`), "the gateway never saw the key from the environment");
  assert.ok(!stderr.includes(GW_KEY) && !stderr.includes(TOKEN), "a secret in the log");
});

test("streamable HTTP with a bearer token", limit, async () => {
  const child = spawn(bin, ["mcp", "--http", "127.0.0.1:0", join(dir, "prompts.toml")], {
    env: serverEnv(),
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listening line; stderr: ${stderr}`)), 10000);
    child.stderr.on("data", (d) => {
      stderr += d;
      const m = stderr.match(/url=(http:\/\/127\.0\.0\.1:\d+\/mcp)/);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.on("exit", (code) => reject(new Error(`exited ${code}: ${stderr}`)));
  });
  try {
    const health = await fetch(url.replace(/\/mcp$/, "/healthz"));
    assert.equal(health.status, 200);
    const anonymous = await fetch(url, { method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }) });
    assert.equal(anonymous.status, 401);
    const wrong = await fetch(url, { method: "POST", headers: { Authorization: "Bearer nope", "Content-Type": "application/json" }, body: "{}" });
    assert.equal(wrong.status, 401);

    const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } });
    const client = new Client({ name: "ci", version: "1" });
    await client.connect(transport);
    try {
      await exercise(client);
    } catch (err) {
      err.message += `\nserver stderr:\n${stderr}`;
      throw err;
    }
    const shout = await client.callTool({ name: "run_prompt", arguments: { prompt: "echo", args: "over http" } });
    assert.equal(shout.structuredContent.value, "OVER HTTP");
    await client.close();
  } finally {
    const exited = new Promise((r) => child.on("exit", r));
    child.kill("SIGTERM");
    const code = await exited;
    assert.equal(code, 0, `exit code after SIGTERM; stderr: ${stderr}`);
  }
  assert.ok(!stderr.includes(GW_KEY) && !stderr.includes(TOKEN), "a secret in the log");
});

// The catalog's prompts are MCP prompts (slash commands in clients):
// listed with their arguments, run by prompts/get, and announced with
// notifications/prompts/list_changed when a prompt file is added.
test("prompts as MCP prompts, with listChanged on a new file", limit, async () => {
  const transport = new StdioClientTransport({
    command: bin,
    args: ["mcp", "--stdio", join(dir, "prompts.toml")],
    env: serverEnv(),
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (d) => (stderr += d));
  const client = new Client({ name: "ci", version: "1" });
  let changed;
  const listChanged = new Promise((resolve) => (changed = resolve));
  client.setNotificationHandler(PromptListChangedNotificationSchema, () => changed());
  await client.connect(transport);
  const fresh = join(dir, "prompts", "fresh.md");
  try {
    assert.equal(client.getServerCapabilities()?.prompts?.listChanged, true);
    const listed = (await client.listPrompts()).prompts;
    assert.deepEqual(listed.map((p) => p.name), ["ask", "echo"]);
    const echoPromptInfo = listed.find((p) => p.name === "echo");
    assert.equal(echoPromptInfo.description, "Return the input upper-cased with no model call");
    assert.deepEqual(echoPromptInfo.arguments.map((a) => a.name), ["args"]);

    const got = await client.getPrompt({ name: "echo", arguments: { args: "slash command" } });
    assert.equal(got.messages.length, 1);
    assert.equal(got.messages[0].role, "user");
    assert.equal(got.messages[0].content.text, "SLASH COMMAND");

    const asked = await client.getPrompt({ name: "ask", arguments: { args: "what is a gateway" } });
    assert.match(asked.messages[0].content.text, /^scripted answer to: Reply to: what is a gateway/);

    writeFileSync(fresh, echo.replace("name: echo", "name: fresh").replace("upper-cased", "shouted"));
    let timer;
    await Promise.race([listChanged, new Promise((_, reject) => (timer = setTimeout(() => reject(new Error("no prompts/list_changed within 20 s")), 20000)))]);
    clearTimeout(timer);
    const after = (await client.listPrompts()).prompts.map((p) => p.name);
    assert.deepEqual(after, ["ask", "echo", "fresh"]);
  } catch (err) {
    err.message += `\nserver stderr:\n${stderr}`;
    throw err;
  } finally {
    try {
      unlinkSync(fresh);
    } catch {}
    await client.close();
  }
});
