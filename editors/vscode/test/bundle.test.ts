// Loads the packaged bundle (dist/extension.js, what the .vsix ships) against
// the vscode stub: the bundle must load, activate must register every
// command, and a missing server must be reported clearly.
import { makeContext, stub } from "./vscode-stub";
import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as path from "node:path";

test("the bundled extension activates and reports a missing server", async () => {
  stub.reset();
  stub.settings.set("promptforge.server.path", "/no/such/dir/forge-lsp");
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const ext = require(path.join(__dirname, "..", "..", "dist", "extension.js"));
  const ctx = makeContext();
  await ext.activate(ctx);
  assert.ok(stub.commands.has("promptforge.runSection"));
  assert.ok(stub.commands.has("promptforge.setGatewayKey"));
  const errors = stub.messages.filter((m) => m.level === "error");
  assert.equal(errors.length, 1);
  assert.match(errors[0].message, /the language server '\/no\/such\/dir\/forge-lsp' was not found/);
  assert.match(String(stub.statusItems[0].text), /\$\(error\)/);
  await ext.deactivate();
});
