// Parsing a run trace (JSON lines written by `forge-lsp run --trace`, the
// debugger's `trace` key, or the LSP run commands; docs/debugging.md) into
// the tree the run-trace view shows: the run, its sections (nested by
// execute and fanout), and inside each section its blocks, model rounds,
// tool calls, store writes and log lines. Kept free of the `vscode` module.

/** One trace event; fields that do not apply are absent. */
export interface TraceEvent {
  ev: string;
  ms?: number;
  line?: number;
  endLine?: number;
  version?: number;
  path?: string;
  input?: string;
  sectionId?: number;
  section?: string;
  address?: string;
  depth?: number;
  arm?: number;
  chain?: boolean;
  kind?: string;
  text?: string;
  model?: string;
  round?: number;
  prompt?: string;
  reply?: string;
  finishReason?: string;
  toolCalls?: number;
  alias?: string;
  tool?: string;
  args?: string;
  result?: string;
  storePath?: string;
  bytes?: number;
  /** var.write: the key changed and its new value as compact JSON (absent: deleted). */
  varPath?: string;
  value?: string;
  message?: string;
  durationMs?: number;
  error?: string;
  errorKind?: string;
  /** Token usage, when the gateway reported it. */
  usage?: { promptTokens?: number; completionTokens?: number; totalTokens?: number };
  promptTokens?: number;
  completionTokens?: number;
  totalTokens?: number;
}

export type NodeKind = "run" | "section" | "block" | "model" | "tool" | "store" | "var" | "log" | "error";

/** One node of the tree. */
export interface TraceNode {
  kind: NodeKind;
  label: string;
  /** Short extra text: duration, tokens, sizes. */
  description: string;
  /** Longer text for the hover. */
  detail: string;
  /** 1-based line in the prompt, when the event has one. */
  line?: number;
  durationMs?: number;
  tokens?: number;
  failed: boolean;
  children: TraceNode[];
}

/** A parsed trace: the prompt it ran and the root node. */
export interface Trace {
  path?: string;
  root: TraceNode;
  /** Lines that were not valid events, with their 1-based line numbers. */
  problems: string[];
}

function node(kind: NodeKind, label: string, line?: number): TraceNode {
  return { kind, label, description: "", detail: "", line: line && line > 0 ? line : undefined, failed: false, children: [] };
}

/** formatDuration renders milliseconds as "12 ms" or "1.2 s". */
export function formatDuration(ms: number): string {
  if (ms < 1) {
    return `${ms.toFixed(2)} ms`;
  }
  if (ms < 1000) {
    return `${Math.round(ms)} ms`;
  }
  return `${(ms / 1000).toFixed(1)} s`;
}

function tokensOf(e: TraceEvent): { prompt?: number; completion?: number; total?: number } | undefined {
  const p = e.usage?.promptTokens ?? e.promptTokens;
  const c = e.usage?.completionTokens ?? e.completionTokens;
  let t = e.usage?.totalTokens ?? e.totalTokens;
  if (p === undefined && c === undefined && t === undefined) {
    return undefined;
  }
  if (t === undefined) {
    t = (p ?? 0) + (c ?? 0);
  }
  return { prompt: p, completion: c, total: t };
}

function oneLine(s: string | undefined, max = 60): string {
  const t = (s ?? "").replace(/\s+/g, " ").trim();
  return t.length > max ? t.slice(0, max - 1) + "…" : t;
}

function describe(n: TraceNode): void {
  const parts: string[] = [];
  if (n.durationMs !== undefined) {
    parts.push(formatDuration(n.durationMs));
  }
  if (n.tokens !== undefined) {
    parts.push(`${n.tokens} tokens`);
  }
  if (n.description) {
    parts.push(n.description);
  }
  n.description = parts.join(" · ");
}

/**
 * parseTrace builds the tree from the text of a trace file. Events of a
 * section whose entry is missing (a truncated trace) hang under the run;
 * lines that are not JSON are reported in problems, not thrown.
 */
export function parseTrace(text: string): Trace {
  const root = node("run", "run");
  const problems: string[] = [];
  const sections = new Map<number, TraceNode>();
  // Open sections by id, in entry order, to nest execute targets and arms.
  const open: { id: number; node: TraceNode; depth: number }[] = [];
  let path: string | undefined;
  let tokens = 0;
  let sawTokens = false;

  const parentFor = (depth: number): TraceNode => {
    for (let i = open.length - 1; i >= 0; i--) {
      if (open[i].depth < depth) {
        return open[i].node;
      }
    }
    return root;
  };
  const home = (e: TraceEvent): TraceNode => (e.sectionId !== undefined && sections.get(e.sectionId)) || sections.get(0) || root;

  text.split("\n").forEach((raw, i) => {
    const s = raw.trim();
    if (s === "") {
      return;
    }
    let e: TraceEvent;
    try {
      e = JSON.parse(s) as TraceEvent;
    } catch {
      problems.push(`line ${i + 1}: not a JSON object`);
      return;
    }
    if (typeof e !== "object" || e === null || typeof e.ev !== "string") {
      problems.push(`line ${i + 1}: no "ev" field`);
      return;
    }
    switch (e.ev) {
      case "run.start": {
        path = e.path;
        root.label = e.path ? e.path.replace(/^.*[\\/]/, "") : "run";
        root.detail = e.input ? `input: ${e.input}` : "";
        break;
      }
      case "section.enter": {
        const id = e.sectionId ?? 0;
        const depth = e.depth ?? 0;
        let label = e.address || (e.section ? (id === 0 ? `# ${e.section}` : e.section) : `section ${id}`);
        if (e.arm) {
          label += ` [arm ${e.arm}]`;
        }
        const n = node("section", label, e.line);
        n.detail = e.chain ? "execute chain" : "";
        sections.set(id, n);
        parentFor(depth).children.push(n);
        open.push({ id, node: n, depth });
        break;
      }
      case "section.exit": {
        const id = e.sectionId ?? 0;
        const n = sections.get(id);
        const at = open.findIndex((o) => o.id === id);
        if (at >= 0) {
          open.splice(at, 1);
        }
        if (!n) {
          break;
        }
        n.durationMs = e.durationMs;
        if (e.error) {
          n.failed = true;
          n.detail = e.error;
        } else if (e.reply !== undefined) {
          n.detail = `reply: ${e.reply}`;
        }
        break;
      }
      case "block": {
        const n = node("block", e.kind === "prose" ? `prose: ${oneLine(e.text) || "(block)"}` : "lua block", e.line);
        if (e.endLine && e.line) {
          n.description = e.endLine > e.line ? `lines ${e.line}–${e.endLine}` : `line ${e.line}`;
        }
        n.detail = e.text ?? "";
        home(e).children.push(n);
        break;
      }
      case "model.round": {
        const n = node("model", `model round ${e.round ?? ""}`.trim() + (e.model ? `: ${e.model}` : ""), e.line);
        n.durationMs = e.durationMs;
        const t = tokensOf(e);
        if (t) {
          n.tokens = t.total;
          tokens += t.total ?? 0;
          sawTokens = true;
        }
        const extra: string[] = [];
        if (e.toolCalls) {
          extra.push(`${e.toolCalls} tool call${e.toolCalls === 1 ? "" : "s"}`);
        }
        if (e.finishReason) {
          extra.push(e.finishReason);
        }
        n.description = extra.join(", ");
        n.failed = !!e.error;
        n.detail = [
          e.prompt !== undefined ? `prompt: ${e.prompt}` : "",
          e.reply !== undefined ? `reply: ${e.reply}` : "",
          t ? `tokens: ${t.prompt ?? "?"} prompt + ${t.completion ?? "?"} completion` : "",
          e.error ? `error: ${e.error}` : "",
        ]
          .filter(Boolean)
          .join("\n");
        home(e).children.push(n);
        break;
      }
      case "tool.call": {
        const n = node("tool", `tool ${e.alias ?? e.tool ?? "?"}` + (e.tool && e.alias && e.tool !== e.alias ? ` (${e.tool})` : ""), e.line);
        n.durationMs = e.durationMs;
        n.description = oneLine(e.args, 40);
        n.failed = !!e.error;
        n.detail = [`args: ${e.args ?? ""}`, e.error ? `error: ${e.error}` : `result: ${e.result ?? ""}`].join("\n");
        home(e).children.push(n);
        break;
      }
      case "store.write": {
        const n = node("store", `store ${e.kind ?? "write"} ${e.storePath ?? ""}`.trim(), e.line);
        n.description = e.bytes !== undefined ? `${e.bytes} bytes` : "";
        home(e).children.push(n);
        break;
      }
      case "var.write": {
        const n = node("var", `${e.varPath ?? "var"} = ${e.value === undefined ? "nil" : oneLine(e.value, 60)}`, e.line);
        n.detail = e.value ?? "deleted";
        home(e).children.push(n);
        break;
      }
      case "log": {
        const n = node("log", `log: ${oneLine(e.message)}`, e.line);
        n.detail = e.message ?? "";
        home(e).children.push(n);
        break;
      }
      case "run.end": {
        root.durationMs = e.ms;
        if (e.error) {
          root.failed = true;
          const n = node("error", `error: ${oneLine(e.error)}`, e.line);
          n.failed = true;
          n.description = e.errorKind ? `${e.errorKind} error` : "";
          n.detail = e.error;
          root.children.push(n);
          root.detail = [root.detail, `error: ${e.error}`].filter(Boolean).join("\n");
        } else if (e.reply !== undefined) {
          root.detail = [root.detail, `result: ${e.reply}`].filter(Boolean).join("\n");
        }
        break;
      }
      default:
        // Newer event kinds are skipped so an older extension still reads the trace.
        break;
    }
  });
  if (sawTokens) {
    root.tokens = tokens;
  }
  const walk = (n: TraceNode) => {
    describe(n);
    n.children.forEach(walk);
  };
  walk(root);
  return { path, root, problems };
}

/** quoted is text as one quoted line, whole, for a comparison. */
function quoted(s: string | undefined): string {
  return JSON.stringify(s ?? "");
}

/**
 * compareText renders a trace for comparing two runs side by side (the
 * debugger's re-runs, docs/debugging.md#what-if): one line per event, under
 * its section, with timings left out, so that two runs differ only where
 * they did different things: prose sent, model replies, tool calls and
 * results, store changes, logs and the outcome.
 */
export function compareText(text: string): string {
  const out: string[] = [];
  for (const raw of text.split("\n")) {
    if (raw.trim() === "") {
      continue;
    }
    let e: TraceEvent;
    try {
      e = JSON.parse(raw) as TraceEvent;
    } catch {
      out.push(`(unreadable line) ${raw}`);
      continue;
    }
    const at = e.line ? `:${e.line}` : "";
    const where = e.address ?? e.section ?? "";
    switch (e.ev) {
      case "run.start":
        out.push(`run ${e.path ?? ""} input ${quoted(e.input)}`);
        break;
      case "section.enter":
        out.push(`${"  ".repeat(e.depth ?? 0)}enter ${where}${at}${e.arm ? ` arm ${e.arm}` : ""}`);
        break;
      case "section.exit":
        out.push(`${"  ".repeat(e.depth ?? 0)}exit ${where}${e.error ? ` error ${quoted(e.error)}` : ` reply ${quoted(e.reply)}`}`);
        break;
      case "block":
        out.push(`  ${e.kind} block${at}${e.kind === "prose" ? ` sends ${quoted(e.text)}` : ""}`);
        break;
      case "model.round":
        out.push(`  model ${e.model ?? ""} round ${e.round ?? ""}${at}: ${quoted(e.prompt)} -> ${e.error ? `error ${quoted(e.error)}` : quoted(e.reply)}${e.toolCalls ? ` (${e.toolCalls} tool calls)` : ""}`);
        break;
      case "tool.call":
        out.push(`  tool ${e.alias ?? ""}(${e.args ?? ""})${at} -> ${e.error ? `error ${quoted(e.error)}` : quoted(e.result)}`);
        break;
      case "store.write":
        out.push(`  store ${e.kind} ${e.storePath} (${e.bytes ?? 0} bytes)${at}`);
        break;
      case "var.write":
        out.push(`  ${e.varPath ?? "var"}${at} = ${e.value === undefined ? "nil (deleted)" : e.value}`);
        break;
      case "log":
        out.push(`  log${at} ${quoted(e.message)}`);
        break;
      case "run.end":
        out.push(e.error ? `run failed: ${e.errorKind ?? ""} ${quoted(e.error)}${at}` : `run result ${quoted(e.reply)}`);
        break;
      default:
        out.push(`  ${e.ev}`);
    }
  }
  return out.join("\n") + "\n";
}

/** firstDifference is the 0-based line where a and b first differ, or -1 when they are equal. */
export function firstDifference(a: string, b: string): number {
  const x = a.split("\n");
  const y = b.split("\n");
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    if (x[i] !== y[i]) {
      return i;
    }
  }
  return -1;
}
