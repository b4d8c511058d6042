// The run-trace view: a tree of a trace's sections, blocks, model rounds and
// tool calls with their durations (and token counts when the gateway
// reported them). Selecting a node opens the prompt at the node's line.
// Opened with "PromptForge: Open Run Trace" (also from the explorer on a
// .jsonl file), or with the trace of a debug session when it ends.

import * as vscode from "vscode";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { parseTrace, Trace, TraceNode } from "./tracemodel";

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

const ICONS: Record<TraceNode["kind"], string> = {
  run: "debug-start",
  section: "symbol-namespace",
  block: "symbol-snippet",
  model: "comment-discussion",
  tool: "tools",
  store: "database",
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
  // When a promptforge session ends, its trace opens in the view.
  const ended = vscode.debug.onDidTerminateDebugSession((session) => {
    const trace = session.type === DEBUG_TYPE ? session.configuration.trace : undefined;
    if (typeof trace === "string" && trace !== "" && fs.existsSync(trace)) {
      show(trace);
      // The view keeps the parsed tree; a temporary trace is not needed after.
      if (tempTraces.delete(trace)) {
        fs.rmSync(trace, { force: true });
      }
    }
  });
  return {
    disposables: [
      view,
      ended,
      vscode.commands.registerCommand(CMD_OPEN_TRACE, open),
    ],
    show,
  };
}
