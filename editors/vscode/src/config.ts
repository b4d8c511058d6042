// Settings handling kept free of the `vscode` module so that it can be unit
// tested with plain values.

import * as os from "node:os";
import * as path from "node:path";

/** Name of the environment variable through which the server receives the gateway key. */
export const GATEWAY_KEY_ENV = "PROMPTFORGE_GATEWAY_API_KEY";

/** Environment variable naming a gateway file (docs/gateway.md) for the debug adapter. */
export const GATEWAY_CONFIG_ENV = "PROMPTFORGE_GATEWAY_CONFIG";

/** Key under which the gateway key is kept in the editor's secret storage. */
export const GATEWAY_KEY_SECRET = "promptforge.gatewayKey";

/** The extension's settings, as read from the `promptforge` configuration section. */
export interface Settings {
  serverPath: string;
  gatewayUrl: string;
  gatewayConfig: string;
  replay: string;
  toolsFile: string;
  trace: "off" | "messages" | "verbose";
  /** promptforge.tests.liveTools: replays may run workspace tools (docs/security.md#runs). */
  liveTools: boolean;
  /** promptforge.diagnostics.delay in milliseconds; absent: the server's default. */
  diagnosticsDelay?: number;
}

/**
 * USER_ONLY are the settings that choose the binary the editor runs, where
 * the gateway key goes (the gateway URL and file), and whether replays run
 * the workspace's commands.
 * They are machine-scoped in package.json, and only the user's own value is
 * read: a workspace's .vscode/settings.json never sets them
 * (docs/security.md#editors).
 */
export const USER_ONLY = new Set(["server.path", "gateway.url", "gateway.config", "tests.liveTools"]);

/** Reads one setting; mirrors `WorkspaceConfiguration.get` so tests can pass a plain function. */
export type Getter = (key: string) => unknown;

function str(get: Getter, key: string, fallback: string): string {
  const v = get(key);
  return typeof v === "string" ? v.trim() : fallback;
}

/** readSettings turns the raw configuration into typed settings with defaults. */
export function readSettings(get: Getter): Settings {
  const trace = str(get, "trace.server", "off");
  return {
    // Empty: the bundled binary, then forge-lsp on PATH (see resolve.ts).
    serverPath: str(get, "server.path", ""),
    gatewayUrl: str(get, "gateway.url", ""),
    gatewayConfig: str(get, "gateway.config", ""),
    replay: str(get, "replay", ""),
    toolsFile: str(get, "toolsFile", ""),
    trace: trace === "messages" || trace === "verbose" ? trace : "off",
    liveTools: get("tests.liveTools") === true,
    ...delaySetting(get("diagnostics.delay")),
  };
}

/** delaySetting keeps a usable delay (a finite number, at least 0). */
function delaySetting(v: unknown): { diagnosticsDelay?: number } {
  return typeof v === "number" && Number.isFinite(v) && v >= 0 ? { diagnosticsDelay: v } : {};
}

/** The parts of `WorkspaceConfiguration` userGetter needs. */
export interface ConfigLike {
  get(key: string): unknown;
  inspect?(key: string): { globalValue?: unknown } | undefined;
}

/** userGetter reads USER_ONLY settings from the user's own settings only, the others as the editor resolves them. */
export function userGetter(cfg: ConfigLike): Getter {
  return (k) => (USER_ONLY.has(k) ? cfg.inspect?.(k)?.globalValue : cfg.get(k));
}

/**
 * resolvePath expands `~` and makes a relative path absolute against the
 * workspace root. A bare command name (no separator) is left alone so that
 * the operating system looks it up on PATH.
 */
export function resolvePath(p: string, root: string | undefined, bareIsCommand: boolean): string {
  if (p === "") {
    return p;
  }
  if (p === "~" || p.startsWith("~/")) {
    p = path.join(os.homedir(), p.slice(1));
  }
  if (path.isAbsolute(p)) {
    return p;
  }
  if (bareIsCommand && !p.includes("/") && !p.includes("\\")) {
    return p;
  }
  return root ? path.resolve(root, p) : path.resolve(p);
}

/**
 * The configuration the server understands, sent as initializationOptions and
 * returned for workspace/configuration requests. Empty values are omitted so
 * that the server falls back to its environment.
 */
export interface ServerSettings {
  gatewayUrl?: string;
  gatewayConfig?: string;
  apiKeyEnv: string;
  cassette?: string;
  toolsFile?: string;
  liveTools?: boolean;
  diagnosticsDelay?: number;
}

/** serverSettings maps the editor settings to what the server expects. */
export function serverSettings(s: Settings, root: string | undefined): ServerSettings {
  const out: ServerSettings = { apiKeyEnv: GATEWAY_KEY_ENV };
  if (s.gatewayUrl) {
    out.gatewayUrl = s.gatewayUrl;
  }
  if (s.gatewayConfig) {
    // A user setting: relative to the home folder, never the workspace.
    out.gatewayConfig = resolvePath(s.gatewayConfig, os.homedir(), false);
  }
  if (s.replay) {
    out.cassette = resolvePath(s.replay, root, false);
  }
  if (s.toolsFile) {
    out.toolsFile = resolvePath(s.toolsFile, root, false);
  }
  if (s.liveTools) {
    out.liveTools = true;
  }
  if (s.diagnosticsDelay !== undefined) {
    out.diagnosticsDelay = s.diagnosticsDelay;
  }
  return out;
}

/**
 * serverEnv is the environment of the server process: the editor's own, plus
 * the gateway key when one is stored. A key set in the editor's environment is
 * kept when the secret storage has none.
 */
export function serverEnv(base: NodeJS.ProcessEnv, key: string | undefined): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base };
  if (key) {
    env[GATEWAY_KEY_ENV] = key;
  }
  return env;
}

/**
 * adapterEnv is the extra environment of the debug adapter: the gateway file
 * of the user's setting (relative to the home folder). launch.json (a
 * repository file) cannot name one, since a gateway file decides where keys
 * are sent.
 */
export function adapterEnv(s: Settings): Record<string, string> | undefined {
  if (!s.gatewayConfig) {
    return undefined;
  }
  return { [GATEWAY_CONFIG_ENV]: resolvePath(s.gatewayConfig, os.homedir(), false) };
}
