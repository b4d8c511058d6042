// A small stand-in for the `vscode` module, enough for the controller's unit
// tests. Importing this file installs it: later `require("vscode")` calls
// resolve here. It records what the extension shows so tests can assert it.

import Module = require("node:module");

type Resolver = (request: string, ...rest: unknown[]) => string;
const mod = Module as unknown as { _resolveFilename: Resolver };
const original = mod._resolveFilename;
mod._resolveFilename = function (request: string, ...rest: unknown[]) {
  if (request === "vscode") {
    return __filename;
  }
  return original.call(this, request, ...rest);
};

export class Disposable {
  constructor(private readonly fn: () => void = () => undefined) {}
  dispose(): void {
    this.fn();
  }
}

export class EventEmitter<T> {
  private listeners: ((e: T) => void)[] = [];
  event = (l: (e: T) => void) => {
    this.listeners.push(l);
    return new Disposable(() => (this.listeners = this.listeners.filter((x) => x !== l)));
  };
  fire(e: T): void {
    for (const l of [...this.listeners]) {
      l(e);
    }
  }
  dispose(): void {
    this.listeners = [];
  }
}

export class CancellationTokenSource {
  private emitter = new EventEmitter<void>();
  token = {
    isCancellationRequested: false,
    onCancellationRequested: this.emitter.event,
  };
  cancel(): void {
    if (!this.token.isCancellationRequested) {
      this.token.isCancellationRequested = true;
      this.emitter.fire();
    }
  }
  dispose(): void {}
}

export class ThemeColor {
  constructor(readonly id: string) {}
}

export enum StatusBarAlignment {
  Left = 1,
  Right = 2,
}

export enum ProgressLocation {
  SourceControl = 1,
  Window = 10,
  Notification = 15,
}

export enum ViewColumn {
  Active = -1,
  Beside = -2,
  One = 1,
}

/** An output channel that keeps its lines. */
export class OutputChannel {
  lines: string[] = [];
  shown = 0;
  constructor(readonly name: string) {}
  append(s: string): void {
    this.lines.push(s);
  }
  appendLine(s: string): void {
    this.lines.push(s);
  }
  clear(): void {
    this.lines = [];
  }
  show(): void {
    this.shown++;
  }
  hide(): void {}
  dispose(): void {}
  replace(s: string): void {
    this.lines = [s];
  }
}

/** A message shown with showErrorMessage and friends. */
export interface Shown {
  level: "error" | "warning" | "info";
  message: string;
  items: string[];
}

/** State the tests set up and inspect; reset() clears it. */
export const stub = {
  messages: [] as Shown[],
  inputAnswers: [] as (string | undefined)[],
  inputRequests: [] as Record<string, unknown>[],
  settings: new Map<string, unknown>(),
  /** Values a workspace's .vscode/settings.json sets; they win over settings in get(), and inspect() shows them apart. */
  workspaceSettings: new Map<string, unknown>(),
  commands: new Map<string, (...a: unknown[]) => unknown>(),
  executed: [] as { id: string; args: unknown[] }[],
  opened: [] as { content: string; language?: string; uri?: string }[],
  contentProviders: new Map<string, { provideTextDocumentContent(u: unknown): string }>(),
  shownDocs: [] as { doc: unknown; options: unknown }[],
  statusItems: [] as Record<string, unknown>[],
  channels: [] as OutputChannel[],
  configListeners: new EventEmitter<{ affectsConfiguration(s: string): boolean }>(),
  progressReports: [] as string[],
  /** Set by tests to cancel a withProgress task from the "UI". */
  progressCancel: undefined as CancellationTokenSource | undefined,
  reset(): void {
    this.messages = [];
    this.inputAnswers = [];
    this.inputRequests = [];
    this.settings = new Map();
    this.workspaceSettings = new Map();
    workspace.isTrusted = true;
    this.commands = new Map();
    this.executed = [];
    this.opened = [];
    this.contentProviders = new Map();
    this.shownDocs = [];
    this.statusItems = [];
    this.channels = [];
    this.progressCancel = undefined;
    this.progressReports = [];
    window.activeTextEditor = undefined;
  },
};

function show(level: Shown["level"]) {
  return (message: string, ...items: string[]) => {
    stub.messages.push({ level, message, items });
    return Promise.resolve(undefined);
  };
}

export const window = {
  activeTextEditor: undefined as unknown,
  createOutputChannel(name: string): OutputChannel {
    const c = new OutputChannel(name);
    stub.channels.push(c);
    return c;
  },
  createStatusBarItem() {
    const item: Record<string, unknown> = { text: "", show() {}, hide() {}, dispose() {} };
    stub.statusItems.push(item);
    return item;
  },
  showErrorMessage: show("error"),
  showWarningMessage: show("warning"),
  showInformationMessage: show("info"),
  showInputBox(opts: Record<string, unknown>) {
    stub.inputRequests.push(opts);
    return Promise.resolve(stub.inputAnswers.shift());
  },
  withProgress<R>(_opts: unknown, task: (p: { report(v: { message?: string }): void }, t: CancellationTokenSource["token"]) => Promise<R>) {
    const cts = new CancellationTokenSource();
    stub.progressCancel = cts;
    return task({ report: (v) => stub.progressReports.push(v.message ?? "") }, cts.token);
  },
  showTextDocument(doc: unknown, options: unknown) {
    stub.shownDocs.push({ doc, options });
    return Promise.resolve({});
  },
};

export const workspace = {
  workspaceFolders: undefined as { uri: { fsPath: string } }[] | undefined,
  isTrusted: true,
  getConfiguration(section: string) {
    return {
      get(key: string) {
        const k = `${section}.${key}`;
        return stub.workspaceSettings.has(k) ? stub.workspaceSettings.get(k) : stub.settings.get(k);
      },
      inspect(key: string) {
        const k = `${section}.${key}`;
        return { key: k, globalValue: stub.settings.get(k), workspaceValue: stub.workspaceSettings.get(k) };
      },
    };
  },
  onDidChangeConfiguration: stub.configListeners.event,
  openTextDocument(arg: { content: string; language?: string } | Uri) {
    if (arg instanceof Uri) {
      // A virtual document: its text comes from the scheme's provider.
      const provider = stub.contentProviders.get(arg.scheme);
      if (!provider) {
        return Promise.reject(new Error(`no content provider for ${arg.scheme}`));
      }
      const doc = { uri: arg.toString(), content: provider.provideTextDocumentContent(arg), language: arg.fsPath.endsWith(".md") ? "markdown" : "plaintext" };
      stub.opened.push(doc);
      return Promise.resolve(doc);
    }
    stub.opened.push(arg);
    return Promise.resolve({ uri: "untitled:result", ...arg });
  },
  registerTextDocumentContentProvider(scheme: string, provider: { provideTextDocumentContent(u: unknown): string }) {
    stub.contentProviders.set(scheme, provider);
    return new Disposable(() => stub.contentProviders.delete(scheme));
  },
};

export const commands = {
  registerCommand(id: string, fn: (...a: unknown[]) => unknown) {
    if (stub.commands.has(id)) {
      throw new Error(`command ${id} already registered`);
    }
    stub.commands.set(id, fn);
    return new Disposable(() => stub.commands.delete(id));
  },
  executeCommand(id: string, ...args: unknown[]) {
    stub.executed.push({ id, args });
    return Promise.resolve(undefined);
  },
};

/** An ExtensionContext with in-memory secret storage. */
export function makeContext() {
  const secrets = new Map<string, string>();
  return {
    subscriptions: [] as { dispose(): void }[],
    secretValues: secrets,
    secrets: {
      get: (k: string) => Promise.resolve(secrets.get(k)),
      store: (k: string, v: string) => {
        secrets.set(k, v);
        return Promise.resolve();
      },
      delete: (k: string) => {
        secrets.delete(k);
        return Promise.resolve();
      },
    },
  };
}

// Classes that vscode-languageclient extends when its modules load; the
// bundle test only needs them to exist.
export class CallHierarchyItem {}
export class CodeLens {}
export class CompletionItem {}
export class DocumentLink {}
export class InlayHint {}
export class SymbolInformation {}
export class TypeHierarchyItem {}
export class CodeAction {}
export class Diagnostic {}
export class CancellationError extends Error {}

// The Testing API, enough for src/testing.ts: items, profiles and runs
// that record what the extension reported.
export class Uri {
  private constructor(
    readonly fsPath: string,
    readonly scheme = "file",
    private readonly raw = "",
  ) {}
  static file(p: string): Uri {
    return new Uri(p);
  }
  static parse(s: string): Uri {
    const m = /^([a-z][a-z0-9+.-]*):/.exec(s);
    if (m && m[1] !== "file") {
      // Another scheme: the path without its query, decoded.
      return new Uri(decodeURIComponent(s.slice(m[0].length).replace(/\?.*$/, "")), m[1], s);
    }
    return new Uri(decodeURIComponent(s.replace(/^file:\/\//, "")));
  }
  toString(): string {
    return this.scheme === "file" ? "file://" + this.fsPath : this.raw;
  }
}

export class Position {
  constructor(readonly line: number, readonly character: number) {}
}

export class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(sl: number, sc: number, el: number, ec: number) {
    this.start = new Position(sl, sc);
    this.end = new Position(el, ec);
  }
}

export class Location {
  constructor(readonly uri: Uri, readonly range: Position | Range) {}
}

export class TestMessage {
  expectedOutput?: string;
  actualOutput?: string;
  location?: Location;
  constructor(readonly message: string) {}
  static diff(message: string, expected: string, actual: string): TestMessage {
    const m = new TestMessage(message);
    m.expectedOutput = expected;
    m.actualOutput = actual;
    return m;
  }
}

export enum TestRunProfileKind {
  Run = 1,
  Debug = 2,
  Coverage = 3,
}

export class TestItemCollection {
  private items = new Map<string, TestItem>();
  get size(): number {
    return this.items.size;
  }
  add(i: TestItem): void {
    this.items.set(i.id, i);
  }
  get(id: string): TestItem | undefined {
    return this.items.get(id);
  }
  replace(list: TestItem[]): void {
    this.items = new Map(list.map((i) => [i.id, i]));
  }
  forEach(fn: (i: TestItem) => void): void {
    [...this.items.values()].forEach(fn);
  }
}

export class TestItem {
  children = new TestItemCollection();
  range?: Range;
  constructor(readonly id: string, readonly label: string, readonly uri?: Uri) {}
}

export interface RecordedRun {
  request: { include?: TestItem[]; exclude?: TestItem[] };
  events: { kind: string; id: string; messages?: TestMessage[]; duration?: number }[];
  output: string[];
  ended: boolean;
}

export const testing = {
  controllers: [] as TestController[],
};

export class TestController {
  items = new TestItemCollection();
  profiles: { label: string; kind: TestRunProfileKind; handler: (req: unknown, token: unknown) => Promise<void> }[] = [];
  runs: RecordedRun[] = [];
  resolveHandler?: (item?: TestItem) => Promise<void>;
  refreshHandler?: () => Promise<void>;
  constructor(readonly id: string, readonly label: string) {}
  createTestItem(id: string, label: string, uri?: Uri): TestItem {
    return new TestItem(id, label, uri);
  }
  createRunProfile(label: string, kind: TestRunProfileKind, handler: (req: unknown, token: unknown) => Promise<void>) {
    const p = { label, kind, handler };
    this.profiles.push(p);
    return { dispose() {} };
  }
  createTestRun(request: RecordedRun["request"]) {
    const r: RecordedRun = { request, events: [], output: [], ended: false };
    this.runs.push(r);
    const ev = (kind: string) => (item: TestItem, a?: unknown, b?: unknown) => {
      const messages = Array.isArray(a) ? (a as TestMessage[]) : a instanceof TestMessage ? [a] : undefined;
      const duration = typeof a === "number" ? a : typeof b === "number" ? b : undefined;
      r.events.push({ kind, id: item.id, messages, duration });
    };
    return {
      started: ev("started"),
      passed: ev("passed"),
      failed: ev("failed"),
      errored: ev("errored"),
      skipped: ev("skipped"),
      appendOutput: (s: string) => r.output.push(s),
      end: () => (r.ended = true),
    };
  }
  dispose(): void {}
}

export const tests = {
  createTestController(id: string, label: string): TestController {
    const c = new TestController(id, label);
    testing.controllers.push(c);
    return c;
  },
};

/** A debug adapter started as a process (vscode.DebugAdapterExecutable). */
export class DebugAdapterExecutable {
  constructor(
    public command: string,
    public args: string[] = [],
  ) {}
}

/** vscode.debug: the registered adapter factories and configuration providers by type. */
export const debug = {
  factories: new Map<string, { createDebugAdapterDescriptor(...a: unknown[]): unknown }>(),
  providers: new Map<string, { resolveDebugConfiguration(...a: unknown[]): unknown }>(),
  registerDebugAdapterDescriptorFactory(type: string, f: { createDebugAdapterDescriptor(...a: unknown[]): unknown }) {
    debug.factories.set(type, f);
    return { dispose: () => debug.factories.delete(type) };
  },
  registerDebugConfigurationProvider(type: string, p: { resolveDebugConfiguration(...a: unknown[]): unknown }) {
    debug.providers.set(type, p);
    return { dispose: () => debug.providers.delete(type) };
  },
  /** Fired by tests as VS Code does when a session ends. */
  terminated: new EventEmitter<{ type: string; configuration: Record<string, unknown> }>(),
  onDidTerminateDebugSession(l: (e: { type: string; configuration: Record<string, unknown> }) => void) {
    return debug.terminated.event(l);
  },
};

// Tree views, enough for src/traceview.ts: the provider of each view is kept.
export enum TreeItemCollapsibleState {
  None = 0,
  Collapsed = 1,
  Expanded = 2,
}

export class ThemeIcon {
  constructor(readonly id: string) {}
}

export class TreeItem {
  description?: string;
  tooltip?: string;
  iconPath?: ThemeIcon;
  command?: { title: string; command: string; arguments?: unknown[] };
  constructor(
    readonly label: string,
    readonly collapsibleState: TreeItemCollapsibleState = TreeItemCollapsibleState.None,
  ) {}
}

export const views = new Map<string, { treeDataProvider: unknown; message?: string }>();
(window as Record<string, unknown>).createTreeView = (id: string, opts: { treeDataProvider: unknown }) => {
  const v = { treeDataProvider: opts.treeDataProvider, message: undefined as string | undefined, dispose() {} };
  views.set(id, v);
  return v;
};
(window as Record<string, unknown>).showOpenDialog = () => Promise.resolve(undefined);
