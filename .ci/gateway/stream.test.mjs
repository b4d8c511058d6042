// Streams chat completions and tool calls through `forge-lsp gateway
// serve` with the official OpenAI Node SDK, against two scripted endpoints
// served by this file: one that streams (Server-Sent Events) and one that
// answers every request with a whole completion. A client that aborts
// mid-stream must cancel the endpoint's request. Plain (not streamed)
// completions take the gateway's lean path. FORGE_LSP_BIN names the
// binary.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";

const bin = process.env.FORGE_LSP_BIN;
const GW_KEY = "ci-gateway-key-7d1e44";
const EP_KEY = "ci-endpoint-key-0a9b3c";

let dir, gw, client, streaming, plain;
const cancels = []; // resolvers waiting for an endpoint request to be cancelled
const received = []; // request bodies the endpoints saw

const reply = "Hello from the scripted endpoint";
const toolArgs = '{"city":"Paris","unit":"celsius"}';

function chunk(model, delta, finish = null, extra = {}) {
  return `data: ${JSON.stringify({ id: "chatcmpl-ci", object: "chat.completion.chunk", created: 1, model, choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;
}

// The streaming endpoint sends content word by word, a tool call as an id
// and name then its arguments in pieces, usage when asked, and [DONE]; a
// message "slow" streams until the client goes away.
function streamingEndpoint(req, res, chat) {
  res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
  const m = chat.model;
  const last = chat.messages[chat.messages.length - 1].content;
  if (last === "slow") {
    const timer = setInterval(() => res.write(chunk(m, { content: "tick " })), 20);
    res.on("close", () => {
      clearInterval(timer);
      cancels.shift()?.("cancelled");
    });
    return;
  }
  res.write(chunk(m, { role: "assistant", content: "" }));
  if (chat.tools) {
    res.write(chunk(m, { tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "get_weather", arguments: "" } }] }));
    for (const piece of [toolArgs.slice(0, 10), toolArgs.slice(10)]) {
      res.write(chunk(m, { tool_calls: [{ index: 0, function: { arguments: piece } }] }));
    }
    res.write(chunk(m, {}, "tool_calls"));
  } else {
    for (const word of reply.split(/(?= )/)) res.write(chunk(m, { content: word }));
    res.write(chunk(m, {}, "stop"));
  }
  if (chat.stream_options?.include_usage) {
    res.write(`data: ${JSON.stringify({ id: "chatcmpl-ci", object: "chat.completion.chunk", created: 1, model: m, choices: [], usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 } })}\n\n`);
  }
  res.end("data: [DONE]\n\n");
}

// The plain endpoint ignores "stream" and answers with a whole completion.
function plainEndpoint(req, res, chat) {
  const message = chat.tools
    ? { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: toolArgs } }] }
    : { role: "assistant", content: reply };
  res.writeHead(200, { "Content-Type": "application/json" });
  res.end(JSON.stringify({ id: "chatcmpl-ci", object: "chat.completion", created: 1, model: chat.model, choices: [{ index: 0, finish_reason: chat.tools ? "tool_calls" : "stop", message }], usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 } }));
}

function endpoint(handle) {
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      if (req.headers.authorization !== `Bearer ${EP_KEY}`) {
        res.writeHead(401, { "Content-Type": "application/json" }).end('{"error":{"message":"bad key"}}');
        return;
      }
      const chat = JSON.parse(body);
      received.push(chat);
      handle(req, res, chat);
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

before(async () => {
  assert.ok(bin, "FORGE_LSP_BIN must name the forge-lsp binary");
  streaming = await endpoint(streamingEndpoint);
  plain = await endpoint(plainEndpoint);
  dir = mkdtempSync(join(tmpdir(), "forge-gw-"));
  const file = join(dir, "gateway.toml");
  const ep = (id, server) => `[[endpoint]]\nid = "${id}"\nprotocol = "openai"\nbase_url = "http://127.0.0.1:${server.address().port}/v1"\napi_key = "\${EP_KEY}"\n\n`;
  const model = (name, id) => `[[model]]\nname = "${name}"\ndescription = "scripted ${name} model"\ncontext = 8192\nupstream = "${name}-upstream"\nendpoints = ["${id}"]\n\n`;
  writeFileSync(file, `[server]\nbind = "127.0.0.1:0"\napi_key = "\${GW_KEY}"\n\n` + ep("streaming", streaming) + ep("plain", plain) + model("streamer", "streaming") + model("whole", "plain"));
  gw = spawn(bin, ["gateway", "serve", file], { env: { ...process.env, GW_KEY, EP_KEY }, stdio: ["ignore", "ignore", "pipe"] });
  const base = await new Promise((resolve, reject) => {
    let err = "";
    const timer = setTimeout(() => reject(new Error("gateway serve did not start: " + err)), 30000);
    gw.stderr.on("data", (d) => {
      err += d;
      const m = err.match(/serving .* on (http:\/\/\S+\/v1)/);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    gw.on("exit", (code) => reject(new Error(`gateway serve exited ${code}: ${err}`)));
  });
  client = new OpenAI({ baseURL: base, apiKey: GW_KEY, maxRetries: 0 });
});

after(() => {
  gw?.kill("SIGTERM");
  streaming?.close();
  plain?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const weatherTool = { type: "function", function: { name: "get_weather", description: "Weather of a city", parameters: { type: "object", properties: { city: { type: "string" }, unit: { type: "string" } }, required: ["city"] } } };

for (const model of ["streamer", "whole"]) {
  test(`${model}: a chat completion streams through the gateway`, async () => {
    const stream = await client.chat.completions.create({ model, messages: [{ role: "user", content: "hi" }], stream: true, stream_options: { include_usage: true } });
    let text = "";
    let finish = null;
    let usage = null;
    let chunks = 0;
    for await (const c of stream) {
      chunks++;
      assert.equal(c.model, model, "every chunk carries the caller's model name");
      assert.equal(c.object, "chat.completion.chunk");
      if (c.usage) usage = c.usage;
      for (const ch of c.choices) {
        text += ch.delta?.content ?? "";
        finish = ch.finish_reason ?? finish;
      }
    }
    assert.equal(text, reply);
    assert.equal(finish, "stop");
    assert.equal(usage?.total_tokens, 18);
    assert.ok(chunks >= 3, `${chunks} chunks`);
    assert.equal(received.at(-1).model, `${model}-upstream`);
    assert.equal(received.at(-1).stream, true);
  });

  test(`${model}: a tool call streams with its index and assembles`, async () => {
    const stream = client.chat.completions.stream({ model, messages: [{ role: "user", content: "weather in Paris?" }], tools: [weatherTool] });
    const done = await stream.finalChatCompletion();
    const choice = done.choices[0];
    assert.equal(choice.finish_reason, "tool_calls");
    const call = choice.message.tool_calls?.[0];
    assert.equal(call?.function.name, "get_weather");
    assert.equal(call?.function.arguments, toolArgs);
    assert.deepEqual(JSON.parse(call.function.arguments), { city: "Paris", unit: "celsius" });
  });
}

test("whole: plain (not streamed) completions and a tool call come back whole, on kept-alive connections", async () => {
  for (let i = 0; i < 3; i++) {
    const c = await client.chat.completions.create({ model: "whole", messages: [{ role: "user", content: "hi" }] });
    assert.equal(c.model, "whole");
    assert.equal(c.choices[0].message.content, reply);
    assert.equal(c.usage.total_tokens, 18);
    assert.equal(received.at(-1).model, "whole-upstream");
    assert.equal(received.at(-1).stream, undefined);
  }
  const t = await client.chat.completions.create({ model: "whole", messages: [{ role: "user", content: "weather in Paris?" }], tools: [weatherTool] });
  assert.equal(t.choices[0].finish_reason, "tool_calls");
  assert.equal(t.choices[0].message.tool_calls?.[0]?.function.arguments, toolArgs);
  await assert.rejects(client.chat.completions.create({ model: "nope", messages: [{ role: "user", content: "x" }] }), (e) => e.status === 404 && /unknown model/.test(e.message));
});

test("a client that aborts mid-stream cancels the endpoint's request", async () => {
  let timer;
  const cancelled = new Promise((resolve, reject) => {
    cancels.push(resolve);
    timer = setTimeout(() => reject(new Error("the endpoint's request was not cancelled within 10 s")), 10000);
  });
  const ac = new AbortController();
  const stream = await client.chat.completions.create({ model: "streamer", messages: [{ role: "user", content: "slow" }], stream: true }, { signal: ac.signal });
  let got = 0;
  try {
    for await (const c of stream) {
      assert.equal(c.choices[0].delta.content, "tick ");
      if (++got === 2) ac.abort();
    }
  } catch (e) {
    assert.ok(e instanceof OpenAI.APIUserAbortError || e.name === "AbortError", String(e));
  }
  assert.equal(got, 2);
  assert.equal(await cancelled, "cancelled");
  clearTimeout(timer);
});

test("an unknown model is the gateway's 404 error, not a stream", async () => {
  await assert.rejects(client.chat.completions.create({ model: "nope", messages: [{ role: "user", content: "x" }], stream: true }), (e) => e.status === 404 && /unknown model/.test(e.message));
});
