// The Testing view: every case of every NAME.test.yaml in the workspace,
// run (and debugged) with `forge-lsp test`. Discovery and runs call the
// same binary the language server uses, with --format json.

import * as vscode from "vscode";
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { userGetter } from "./config";
import { RESTRICTED_MESSAGE, trusted } from "./trust";

/** One case as `forge-lsp test --list --format json` prints it. */
export interface ListedCase {
  file: string;
  line: number;
  name: string;
  skip?: string;
}

/** One result as `forge-lsp test --format json` prints it. */
export interface CaseResult {
  file: string;
  line: number;
  name: string;
  status: "pass" | "fail" | "skip";
  stale?: boolean;
  messages?: string[];
  expected?: string;
  actual?: string;
  diff?: string;
  duration_ms: number;
  trace?: string;
  /** The run's readable transcript (model rounds, tool calls, store writes). */
  transcript?: string;
  /** The run's result. */
  output?: string;
  /** The judge's verdict (expect.judge), of a passing case too. */
  judge?: { model: string; verdict: string; reason: string };
}

export interface ExecResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Exec runs the binary; tests may substitute it. */
export type Exec = (bin: string, args: string[], cwd: string, token?: vscode.CancellationToken) => Promise<ExecResult>;

export const defaultExec: Exec = (bin, args, cwd, token) =>
  new Promise((resolve) => {
    const child = execFile(bin, args, { cwd, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === "number" ? (err as { code: number }).code : 2) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) || (err && !stdout ? String(err.message) : "") });
    });
    token?.onCancellationRequested(() => child.kill("SIGINT"));
  });

/** caseId is the TestItem id of a case. */
export function caseId(file: string, name: string): string {
  return `${file}::${name}`;
}

/** goRegexQuote escapes a case name for `--run` (Go RE2 syntax). */
export function goRegexQuote(s: string): string {
  return s.replace(/[\\.+*?()|[\]{}^$]/g, "\\$&");
}

/** ForgeTests owns the PromptForge TestController. */
export class ForgeTests implements vscode.Disposable {
  readonly ctrl: vscode.TestController;
  private readonly disposables: vscode.Disposable[] = [];

  /**
   * binary returns the forge-lsp command the extension runs (undefined
   * while none is resolved); folders the workspace roots to search.
   */
  constructor(
    private readonly binary: () => string | undefined,
    private readonly exec: Exec = defaultExec,
    private readonly folders: () => string[] = () => (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath),
  ) {
    this.ctrl = vscode.tests.createTestController("promptforge", "PromptForge");
    this.ctrl.resolveHandler = async (item) => {
      if (!item) {
        await this.refresh();
      }
    };
    this.ctrl.refreshHandler = () => this.refresh();
    this.ctrl.createRunProfile("Run", vscode.TestRunProfileKind.Run, (req, token) => this.run(req, token, false), true);
    this.ctrl.createRunProfile("Debug", vscode.TestRunProfileKind.Debug, (req, token) => this.run(req, token, true), true);
    this.disposables.push(this.ctrl);
    const watch = vscode.workspace.createFileSystemWatcher?.("**/*.test.yaml");
    if (watch) {
      const again = () => void this.refresh();
      this.disposables.push(watch, watch.onDidCreate(again), watch.onDidChange(again), watch.onDidDelete(again));
    }
  }

  dispose(): void {
    for (const d of this.disposables) {
      d.dispose();
    }
  }

  /** refresh lists every case of the workspace (`forge-lsp test --list`). */
  async refresh(): Promise<void> {
    const bin = this.binary();
    if (!bin) {
      return;
    }
    const files = new Map<string, vscode.TestItem>();
    for (const folder of this.folders()) {
      const r = await this.exec(bin, ["test", "--list", "--format", "json", folder], folder);
      let listed: { cases: ListedCase[] };
      try {
        listed = JSON.parse(r.stdout) as { cases: ListedCase[] };
      } catch {
        continue; // a folder without test files, or the binary failed
      }
      for (const c of listed.cases ?? []) {
        const file = path.resolve(folder, c.file);
        let parent = files.get(file);
        if (!parent) {
          parent = this.ctrl.createTestItem(file, path.relative(folder, file) || path.basename(file), vscode.Uri.file(file));
          files.set(file, parent);
        }
        const item = this.ctrl.createTestItem(caseId(file, c.name), c.name, vscode.Uri.file(file));
        item.range = new vscode.Range(c.line - 1, 0, c.line - 1, 0);
        parent.children.add(item);
      }
    }
    this.ctrl.items.replace([...files.values()]);
  }

  /** run runs the requested cases, one `forge-lsp test` per file. */
  async run(req: vscode.TestRunRequest, token: vscode.CancellationToken, debug: boolean): Promise<void> {
    const run = this.ctrl.createTestRun(req);
    if (!trusted()) {
      // Tests run the workspace's prompts: not in Restricted Mode.
      void vscode.window.showWarningMessage(RESTRICTED_MESSAGE);
      run.end();
      return;
    }
    try {
      const bin = this.binary();
      const excluded = new Set((req.exclude ?? []).map((i) => i.id));
      const byFile = new Map<string, vscode.TestItem[]>();
      const add = (item: vscode.TestItem) => {
        if (excluded.has(item.id)) {
          return;
        }
        if (item.children.size > 0) {
          item.children.forEach(add);
          return;
        }
        const file = item.uri?.fsPath ?? item.id.split("::")[0];
        byFile.set(file, [...(byFile.get(file) ?? []), item]);
      };
      if (req.include) {
        req.include.forEach(add);
      } else {
        this.ctrl.items.forEach(add);
      }
      if (!bin) {
        for (const items of byFile.values()) {
          for (const item of items) {
            run.errored(item, new vscode.TestMessage("forge-lsp is not running: see the PromptForge output"));
          }
        }
        return;
      }
      for (const [file, items] of byFile) {
        if (token.isCancellationRequested) {
          break;
        }
        await this.runFile(run, bin, file, items, token, debug);
      }
    } finally {
      run.end();
    }
  }

  private async runFile(run: vscode.TestRun, bin: string, file: string, items: vscode.TestItem[], token: vscode.CancellationToken, debug: boolean) {
    const byName = new Map(items.map((i) => [i.label, i]));
    const args = ["test", "--format", "json", "--run", `^(${items.map((i) => goRegexQuote(i.label)).join("|")})$`];
    let traceDir: string | undefined;
    if (debug) {
      traceDir = fs.mkdtempSync(path.join(os.tmpdir(), "forge-test-"));
      args.push("--trace-dir", traceDir);
    }
    if (userGetter(vscode.workspace.getConfiguration("promptforge"))("tests.liveTools") === true) {
      args.push("--live-tools");
    }
    args.push(file);
    for (const i of items) {
      run.started(i);
    }
    const r = await this.exec(bin, args, path.dirname(file), token);
    let results: CaseResult[] = [];
    try {
      results = (JSON.parse(r.stdout) as { results: CaseResult[] }).results ?? [];
    } catch {
      results = [];
    }
    const seen = new Set<string>();
    for (const res of results) {
      const item = byName.get(res.name);
      if (!item) {
        continue;
      }
      seen.add(res.name);
      // The Test Results panel shows what the run did, for a passing case
      // too: its transcript, then its result.
      const shown = caseOutput(res);
      if (shown) {
        run.appendOutput(shown, undefined, item);
      }
      if (res.status === "pass") {
        run.passed(item, res.duration_ms);
      } else if (res.status === "skip") {
        run.skipped(item);
      } else {
        run.failed(item, failureMessages(res, item), res.duration_ms);
        if (res.trace && fs.existsSync(res.trace)) {
          run.appendOutput(fs.readFileSync(res.trace, "utf8").replace(/\n/g, "\r\n"), undefined, item);
        }
      }
    }
    for (const i of items) {
      if (!seen.has(String(i.label))) {
        run.errored(i, new vscode.TestMessage(r.stderr.trim() || `forge-lsp test exited with ${r.code} without a result for this case`));
      }
    }
    if (traceDir) {
      fs.rmSync(traceDir, { recursive: true, force: true });
    }
  }
}

/** caseOutput is what the Test Results panel shows for a case: the
 * transcript and the result, with the CRLF line ends a terminal needs. */
export function caseOutput(res: CaseResult): string {
  let text = "";
  if (res.transcript) {
    text += `▶ ${res.name}\n${res.transcript}`;
    if (!text.endsWith("\n")) {
      text += "\n";
    }
  }
  if (res.output) {
    text += `■ Result:\n${res.output}\n`;
  }
  if (res.judge) {
    text += `⚖ Judge (${res.judge.model}): ${res.judge.verdict}. ${res.judge.reason}\n`;
  }
  return text.replace(/\r?\n/g, "\r\n");
}

/** failureMessages turns a failing result into test messages at the case. */
export function failureMessages(res: CaseResult, item: vscode.TestItem): vscode.TestMessage[] {
  let text = (res.messages ?? []).join("\n");
  if (res.diff) {
    text += "\n" + res.diff;
  }
  const msg =
    res.expected !== undefined && res.actual !== undefined
      ? vscode.TestMessage.diff(text, res.expected, res.actual)
      : new vscode.TestMessage(text);
  if (item.uri) {
    msg.location = new vscode.Location(item.uri, new vscode.Position(res.line - 1, 0));
  }
  return [msg];
}
