// The run-trace view: a tree of a trace's sections, blocks, model rounds and
// tool calls with their durations (and token counts when the gateway
// reported them). Selecting a node opens the prompt at the node's line.
// Opened with "PromptForge: Open Run Trace" (also from the explorer on a
// .jsonl file), or with the trace of a debug session when it ends.

import * as vscode from "vscode";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { compareText, firstDifference, parseTrace, Trace, TraceNode } from "./tracemodel";

export const VIEW_ID = "promptforge.runTrace";
const DEBUG_TYPE = "promptforge";

let traceCounter = 0;
/** Trace files the extension chose for sessions; removed once shown. */
const tempTraces = new Set<string>();

/**
 * sessionTrace is where a debug session that names no `trace` writes its
 * trace: a fresh file in the temporary folder, shown when the session ends.
 */
export function sessionTrace(): string {
  traceCounter++;
  const file = path.join(os.tmpdir(), `promptforge-debug-${process.pid}-${traceCounter}.jsonl`);
  tempTraces.add(file);
  return file;
}
export const CMD_OPEN_TRACE = "promptforge.openRunTrace";
export const CMD_COMPARE_RUNS = "promptforge.compareRuns";
const COMPARE_SCHEME = "promptforge-run";

/**
 * keptTraces are the traces a debug session kept of its runs before the
 * last, beside its trace (the debugger writes p.jsonl's earlier runs as
 * p.1.jsonl, p.2.jsonl, ...), oldest first.
 */
export function keptTraces(trace: string): string[] {
  const ext = path.extname(trace);
  const base = trace.slice(0, trace.length - ext.length);
  const out: string[] = [];
  for (let n = 1; fs.existsSync(`${base}.${n}${ext}`); n++) {
    out.push(`${base}.${n}${ext}`);
  }
  return out;
}

const ICONS: Record<TraceNode["kind"], string> = {
  run: "debug-start",
  section: "symbol-namespace",
  block: "symbol-snippet",
  model: "comment-discussion",
  tool: "tools",
  store: "database",
  var: "symbol-variable",
  log: "output",
  error: "error",
};

/** RunTraceProvider serves the tree of one trace. */
export class RunTraceProvider implements vscode.TreeDataProvider<TraceNode> {
  private trace: Trace | undefined;
  private file: string | undefined;
  private readonly changed = new vscode.EventEmitter<TraceNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;

  /** load reads and shows a trace file; it returns the parsed trace. */
  load(file: string): Trace {
    const text = fs.readFileSync(file, "utf8");
    this.trace = parseTrace(text);
    this.file = file;
    this.changed.fire(undefined);
    return this.trace;
  }

  get current(): Trace | undefined {
    return this.trace;
  }

  /** The prompt the trace ran, absolute (a relative path is taken from the trace's folder or the workspace). */
  promptPath(): string | undefined {
    const p = this.trace?.path;
    if (!p || path.isAbsolute(p)) {
      return p;
    }
    const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const candidates = [root ? path.join(root, p) : undefined, this.file ? path.join(path.dirname(this.file), p) : undefined];
    return candidates.find((c) => c && fs.existsSync(c)) ?? candidates.find(Boolean);
  }

  getChildren(n?: TraceNode): TraceNode[] {
    if (!this.trace) {
      return [];
    }
    return n ? n.children : [this.trace.root];
  }

  getTreeItem(n: TraceNode): vscode.TreeItem {
    const state =
      n.children.length === 0
        ? vscode.TreeItemCollapsibleState.None
        : n.kind === "run" || n.kind === "section"
          ? vscode.TreeItemCollapsibleState.Expanded
          : vscode.TreeItemCollapsibleState.Collapsed;
    const item = new vscode.TreeItem(n.label, state);
    item.description = n.description;
    item.tooltip = n.detail || n.label;
    item.iconPath = new vscode.ThemeIcon(n.failed ? "error" : ICONS[n.kind]);
    const prompt = this.promptPath();
    if (n.line && prompt) {
      const at = new vscode.Range(n.line - 1, 0, n.line - 1, 0);
      item.command = { title: "Show source", command: "vscode.open", arguments: [vscode.Uri.file(prompt), { selection: at, preserveFocus: true }] };
    }
    return item;
  }
}

/** registerTraceView creates the view and its commands; show(file) loads a trace into it. */
export function registerTraceView(): { disposables: vscode.Disposable[]; show(file: string): void } {
  const provider = new RunTraceProvider();
  const view = vscode.window.createTreeView(VIEW_ID, { treeDataProvider: provider, showCollapseAll: true });
  const show = (file: string) => {
    try {
      const t = provider.load(file);
      view.message = t.problems.length ? `${t.problems.length} unreadable line(s): ${t.problems[0]}` : undefined;
      void vscode.commands.executeCommand(`${VIEW_ID}.focus`);
    } catch (e) {
      void vscode.window.showErrorMessage(`PromptForge: cannot read the run trace ${file}: ${(e as Error).message}`);
    }
  };
  const open = async (arg?: unknown) => {
    let file = arg instanceof vscode.Uri ? arg.fsPath : typeof arg === "string" ? arg : undefined;
    if (!file) {
      const picked = await vscode.window.showOpenDialog({
        title: "PromptForge: Open Run Trace",
        canSelectMany: false,
        filters: { "Run traces": ["jsonl", "json", "trace"], "All files": ["*"] },
      });
      file = picked?.[0]?.fsPath;
    }
    if (file) {
      show(file);
    }
  };
  // Rendered runs for the diff editor, by URI path.
  const rendered = new Map<string, string>();
  let compared = 0;
  const compare = async (older: string, newer: string, olderName: string, newerName: string) => {
    compared++;
    const left = vscode.Uri.parse(`${COMPARE_SCHEME}:/${compared}/${encodeURIComponent(olderName)}`);
    const right = vscode.Uri.parse(`${COMPARE_SCHEME}:/${compared}/${encodeURIComponent(newerName)}`);
    const a = compareText(older);
    const b = compareText(newer);
    rendered.set(left.fsPath, a);
    rendered.set(right.fsPath, b);
    // The diff opens at the first difference.
    const line = Math.max(firstDifference(a, b), 0);
    await vscode.commands.executeCommand("vscode.diff", left, right, `${olderName} ↔ ${newerName}`, {
      selection: new vscode.Range(line, 0, line, 0),
    });
  };
  // Compare two trace files: the arguments, or two files the user picks.
  const compareFiles = async (a?: unknown, b?: unknown) => {
    const asPath = (x: unknown) => (x instanceof vscode.Uri ? x.fsPath : typeof x === "string" ? x : undefined);
    let files = [asPath(a), asPath(b)].filter((x): x is string => !!x);
    if (files.length < 2) {
      const picked = await vscode.window.showOpenDialog({
        title: "PromptForge: Compare Runs (pick the earlier and the later trace)",
        canSelectMany: true,
        filters: { "Run traces": ["jsonl", "json", "trace"], "All files": ["*"] },
      });
      files = (picked ?? []).map((u) => u.fsPath);
    }
    if (files.length !== 2) {
      return;
    }
    try {
      await compare(fs.readFileSync(files[0], "utf8"), fs.readFileSync(files[1], "utf8"), path.basename(files[0]), path.basename(files[1]));
    } catch (e) {
      void vscode.window.showErrorMessage(`PromptForge: cannot compare the runs: ${(e as Error).message}`);
    }
  };
  // When a promptforge session ends, its trace opens in the view; after a
  // re-run (what if), its last two runs can be compared side by side.
  const ended = vscode.debug.onDidTerminateDebugSession((session) => {
    const trace = session.type === DEBUG_TYPE ? session.configuration.trace : undefined;
    if (typeof trace === "string" && trace !== "" && fs.existsSync(trace)) {
      show(trace);
      const kept = keptTraces(trace);
      const previous = kept.length ? fs.readFileSync(kept[kept.length - 1], "utf8") : undefined;
      const last = previous !== undefined ? fs.readFileSync(trace, "utf8") : undefined;
      // The view keeps the parsed tree; a temporary trace is not needed after.
      if (tempTraces.delete(trace)) {
        for (const f of [trace, ...kept]) {
          fs.rmSync(f, { force: true });
        }
      }
      if (previous !== undefined && last !== undefined) {
        const n = kept.length + 1;
        void Promise.resolve(vscode.window.showInformationMessage(`PromptForge: the session ran the prompt ${n} times.`, "Compare with previous run")).then(
          (pick) => (pick ? compare(previous, last, `run ${n - 1}`, `run ${n}`) : undefined),
        );
      }
    }
  });
  return {
    disposables: [
      view,
      ended,
      vscode.commands.registerCommand(CMD_OPEN_TRACE, open),
      vscode.commands.registerCommand(CMD_COMPARE_RUNS, compareFiles),
      vscode.workspace.registerTextDocumentContentProvider(COMPARE_SCHEME, {
        provideTextDocumentContent: (uri: vscode.Uri) => rendered.get(uri.fsPath) ?? "",
      }),
    ],
    show,
  };
}
