// Server resolution with the real forge-lsp binary and a stub standing in
// for the binary a platform-specific package bundles: the setting wins, then
// the bundled binary, then PATH; with none the user is told what to do.
import { makeContext, stub } from "./vscode-stub";
import { after, beforeEach, test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type * as vscode from "vscode";
import { ClientOptions, ForgeController, ServerClient } from "../src/controller";
import { bundledServerPath, serverCandidates } from "../src/resolve";
import { serverBinary } from "./harness";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "forge-resolve-"));
const realBin = serverBinary();
// A folder whose only forge-lsp is the real binary, to put on PATH.
const pathDir = path.join(tmp, "path");
fs.mkdirSync(pathDir);
fs.symlinkSync(realBin, path.join(pathDir, "forge-lsp"));
const emptyDir = path.join(tmp, "empty");
fs.mkdirSync(emptyDir);
// An installed platform-specific package: bin/forge-lsp is a stub that
// answers `version` like forge-lsp with a version of its own.
const platformExt = path.join(tmp, "ext-linux-x64");
fs.mkdirSync(path.join(platformExt, "bin"), { recursive: true });
fs.writeFileSync(bundledServerPath(platformExt, "linux"), '#!/bin/sh\necho "forge-lsp 0.1.0+bundled"\n', { mode: 0o755 });
// The universal package carries no binary.
const universalExt = path.join(tmp, "ext-universal");
fs.mkdirSync(universalExt);

const savedPath = process.env.PATH;
after(() => {
  process.env.PATH = savedPath;
  fs.rmSync(tmp, { recursive: true, force: true });
});
beforeEach(() => {
  stub.reset();
  process.env.PATH = pathDir;
});

class NullClient implements ServerClient {
  constructor(readonly opts: ClientOptions) {}
  async start() {}
  async stop() {}
  serverVersion() {
    return undefined;
  }
  sendRequest<R>(): Promise<R> {
    return Promise.resolve(null as R);
  }
  async sendNotification() {}
  onProgress() {
    return { dispose() {} };
  }
  onDidStop() {
    return { dispose() {} };
  }
}

async function startWith(extensionPath: string) {
  const ctx = { ...makeContext(), extensionPath };
  const clients: NullClient[] = [];
  const c = new ForgeController(ctx as unknown as vscode.ExtensionContext, (o) => {
    const n = new NullClient(o);
    clients.push(n);
    return n;
  });
  await c.start();
  const log = stub.channels.find((ch) => ch.name === "PromptForge")!.lines;
  return { c, clients, log };
}

test("the setting wins over the bundled binary and PATH", async () => {
  stub.settings.set("promptforge.server.path", realBin);
  const { c, clients, log } = await startWith(platformExt);
  assert.equal(c.state, "running");
  assert.equal(clients[0].opts.command, realBin);
  assert.equal(c.version, "0.1.0");
  assert.ok(log.includes(`Starting forge-lsp 0.1.0 from the promptforge.server.path setting: ${realBin} serve`), log.join("\n"));
});

test("without a setting the bundled binary is used", async () => {
  const { c, clients, log } = await startWith(platformExt);
  assert.equal(c.state, "running");
  assert.equal(clients[0].opts.command, path.join(platformExt, "bin", "forge-lsp"));
  assert.equal(c.version, "0.1.0+bundled");
  assert.ok(log.some((l) => l.startsWith("Starting forge-lsp 0.1.0+bundled from the binary bundled with the extension")), log.join("\n"));
});

test("the universal package starts forge-lsp from PATH", async () => {
  const { c, clients, log } = await startWith(universalExt);
  assert.equal(c.state, "running");
  assert.equal(clients[0].opts.command, "forge-lsp");
  assert.equal(c.version, "0.1.0");
  assert.ok(log.includes("Starting forge-lsp 0.1.0 from PATH: forge-lsp serve"), log.join("\n"));
});

test("a bundled binary that lost its execute bits is made executable", async () => {
  const ext = path.join(tmp, "ext-no-x");
  fs.mkdirSync(path.join(ext, "bin"), { recursive: true });
  const bin = bundledServerPath(ext, "linux");
  fs.writeFileSync(bin, '#!/bin/sh\necho "forge-lsp 0.1.0+bundled"\n', { mode: 0o644 });
  const { c, clients } = await startWith(ext);
  assert.equal(c.state, "running");
  assert.equal(clients[0].opts.command, bin);
  assert.equal(fs.statSync(bin).mode & 0o111, 0o111);
});

test("a bundled binary that does not run falls back to PATH and says why", async () => {
  const broken = path.join(tmp, "ext-broken");
  fs.mkdirSync(path.join(broken, "bin"), { recursive: true });
  fs.writeFileSync(bundledServerPath(broken, "linux"), "not a program\n", { mode: 0o644 });
  const { c, clients, log } = await startWith(broken);
  assert.equal(c.state, "running");
  assert.equal(clients[0].opts.command, "forge-lsp");
  assert.ok(log.some((l) => l.startsWith(`Not using ${path.join(broken, "bin", "forge-lsp")} (the binary bundled with the extension)`)), log.join("\n"));
});

test("with no setting, no bundled binary and nothing on PATH the user is told what to do", async () => {
  process.env.PATH = emptyDir;
  const { c, clients } = await startWith(universalExt);
  assert.equal(c.state, "failed");
  assert.equal(clients.length, 0);
  const errors = stub.messages.filter((m) => m.level === "error");
  assert.equal(errors.length, 1);
  assert.match(errors[0].message, /'forge-lsp' was not found/);
  assert.match(errors[0].message, /extension for your platform/);
  assert.match(errors[0].message, /promptforge\.server\.path/);
});

test("serverCandidates: a set path is the only candidate; .exe on Windows", () => {
  const yes = () => true;
  assert.deepEqual(serverCandidates("/opt/forge-lsp", undefined, "/ext", "linux", yes), [{ source: "setting", command: "/opt/forge-lsp" }]);
  assert.deepEqual(serverCandidates("", undefined, "C:\\ext", "win32", yes).map((c) => c.source), ["bundled", "PATH"]);
  assert.match(serverCandidates("", undefined, "/ext", "win32", yes)[0].command, /forge-lsp\.exe$/);
  assert.deepEqual(serverCandidates("", undefined, "/ext", "linux", () => false), [{ source: "PATH", command: "forge-lsp" }]);
});
