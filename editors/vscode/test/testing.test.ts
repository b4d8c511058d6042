// The Testing view against the real forge-lsp binary: discovery with
// `forge-lsp test --list`, runs with `--format json`, failures with an
// expected/actual diff at the case's line.
import { CancellationTokenSource, TestController, TestMessage, testing } from "./vscode-stub";
import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type * as vscode from "vscode";
import { ForgeTests, caseOutput, failureMessages, goRegexQuote } from "../src/testing";
import { serverBinary } from "./harness";

const PROMPT = "---\nname: shout\ndescription: Upper-case the input\npromptforge: 1\n---\n\n# Shout\n\n## Loud\n\n```lua\nreturn string.upper(args)\n```\n";
const TESTS = `cases:
  - name: shouts (loudly)
    input: hi
    expect:
      output: {equals: HI}
  - name: whispers
    input: hi
    expect:
      output: {equals: hi}
  - name: later
    skip: "not yet"
`;

function workspace(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "forge-vscode-tests-"));
  fs.mkdirSync(path.join(dir, "prompts"));
  fs.writeFileSync(path.join(dir, "prompts", "shout.md"), PROMPT);
  fs.writeFileSync(path.join(dir, "prompts", "shout.test.yaml"), TESTS);
  return dir;
}

test("goRegexQuote escapes RE2 metacharacters", () => {
  assert.equal(goRegexQuote("a (b) [c] x.y*"), "a \\(b\\) \\[c\\] x\\.y\\*");
});

test("the TestController lists, runs and debugs the workspace's cases", async () => {
  const bin = serverBinary();
  const dir = workspace();
  const t = new ForgeTests(() => bin, undefined, () => [dir]);
  const ctrl = testing.controllers[testing.controllers.length - 1] as TestController;
  assert.deepEqual(
    ctrl.profiles.map((p) => p.label),
    ["Run", "Debug"],
  );
  await ctrl.resolveHandler!();
  const file = path.join(dir, "prompts", "shout.test.yaml");
  const fileItem = ctrl.items.get(file);
  assert.ok(fileItem, "the test file is listed");
  const names: string[] = [];
  fileItem!.children.forEach((i) => names.push(`${i.label}@${i.range?.start.line}`));
  assert.deepEqual(names, ["shouts (loudly)@1", "whispers@5", "later@9"]);

  // Run everything.
  await ctrl.profiles[0].handler({}, new CancellationTokenSource().token);
  const run = ctrl.runs[0];
  assert.ok(run.ended);
  const kinds = Object.fromEntries(run.events.filter((e) => e.kind !== "started").map((e) => [e.id.split("::")[1], e.kind]));
  assert.deepEqual(kinds, { "shouts (loudly)": "passed", whispers: "failed", later: "skipped" });
  const failed = run.events.find((e) => e.kind === "failed")!;
  const msg = failed.messages![0] as TestMessage;
  assert.equal(msg.expectedOutput, "hi");
  assert.equal(msg.actualOutput, "HI");
  assert.match(msg.message, /output: want "hi", got "HI"/);
  assert.equal((msg.location!.range as { line: number }).line, 5);
  // The Test Results panel shows what each case did, a passing one too:
  // its transcript and its result, not "did not record any output".
  const shown = run.output.join("");
  assert.match(shown, /▶ shouts \(loudly\)\r\n/);
  assert.match(shown, /enter ## Loud/);
  assert.match(shown, /■ Result:\r\nHI\r\n/);

  // Debug one case: the failing case's transcript is attached.
  const whispers = fileItem!.children.get(`${file}::whispers`)!;
  await ctrl.profiles[1].handler({ include: [whispers] }, new CancellationTokenSource().token);
  const dbg = ctrl.runs[1];
  assert.deepEqual(
    dbg.events.map((e) => e.kind),
    ["started", "failed"],
  );
  assert.match(dbg.output.join(""), /enter ## Loud/);

  // A case whose name needs escaping runs alone.
  const loud = fileItem!.children.get(`${file}::shouts (loudly)`)!;
  await ctrl.profiles[0].handler({ include: [loud] }, new CancellationTokenSource().token);
  assert.deepEqual(
    ctrl.runs[2].events.map((e) => e.kind),
    ["started", "passed"],
  );
  t.dispose();
  fs.rmSync(dir, { recursive: true, force: true });
});

test("Test Results show the judge's verdict and the trajectory mismatches", () => {
  const shown = caseOutput({
    file: "a.test.yaml", line: 2, name: "graded", status: "pass", duration_ms: 1, output: "Hi Ada",
    judge: { model: "grader-1", verdict: "pass", reason: "It greets Ada by name." },
  });
  assert.match(shown, /■ Result:\r\nHi Ada\r\n⚖ Judge \(grader-1\): pass\. It greets Ada by name\.\r\n/);
  const item = {} as vscode.TestItem;
  const table = "tool_calls[2]: order exact: call 2 (Plan, round 2) is not book (the tool is lookup); the run's calls:\n    #   section / round   tool(args)\n    1   Plan / 1   lookup({})";
  const msgs = failureMessages(
    { file: "a.test.yaml", line: 2, name: "t", status: "fail", duration_ms: 1, messages: [table, "judge: verdict: want \"pass\", got \"fail\"; the judge (grader-1) gave the reason: \"No.\""] },
    item,
  );
  assert.match(String(msgs[0].message), /call 2 \(Plan, round 2\)[\s\S]*1   Plan \/ 1   lookup/);
  assert.match(String(msgs[0].message), /the judge \(grader-1\) gave the reason: "No\."/);
});

test("without a server binary every case errors", async () => {
  const t = new ForgeTests(() => undefined, undefined, () => []);
  const ctrl = testing.controllers[testing.controllers.length - 1] as TestController;
  const item = ctrl.createTestItem("f::a", "a");
  ctrl.items.replace([item]);
  await ctrl.profiles[0].handler({}, new CancellationTokenSource().token);
  assert.equal(ctrl.runs[0].events[0].kind, "errored");
  t.dispose();
  void ({} as vscode.TestItem);
});
