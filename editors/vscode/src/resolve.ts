// Finding the forge-lsp binary to start, in order: the
// promptforge.server.path setting when the user set it, the binary bundled
// in a platform-specific package (bin/forge-lsp, .exe on Windows), then
// forge-lsp on PATH. Kept free of the `vscode` module so tests can drive it
// with real files.

import * as fs from "node:fs";
import * as path from "node:path";
import { resolvePath } from "./config";
import type { ProbeResult } from "./probe";

/** Where a server candidate comes from, as said in the output channel. */
export type ServerSource = "setting" | "bundled" | "PATH";

export interface ServerCandidate {
  source: ServerSource;
  command: string;
}

/** The result of resolving: the server to start, or why there is none. */
export type Resolved =
  | { ok: true; source: ServerSource; command: string; version: string; tried: string[] }
  | { ok: false; message: string; tried: string[] };

/** bundledServerPath is where a platform-specific package carries the binary. */
export function bundledServerPath(extensionPath: string, platform: NodeJS.Platform = process.platform): string {
  return path.join(extensionPath, "bin", platform === "win32" ? "forge-lsp.exe" : "forge-lsp");
}

/**
 * serverCandidates lists what to try. A set path is the only candidate: the
 * user asked for that binary, so a failure is reported, not papered over.
 * A relative set path is resolved against base (the home folder; never the
 * workspace, which must not choose the binary: docs/security.md#editors).
 */
export function serverCandidates(
  settingPath: string,
  base: string | undefined,
  extensionPath: string | undefined,
  platform: NodeJS.Platform = process.platform,
  exists: (p: string) => boolean = fs.existsSync,
): ServerCandidate[] {
  if (settingPath !== "") {
    return [{ source: "setting", command: resolvePath(settingPath, base, true) }];
  }
  const out: ServerCandidate[] = [];
  if (extensionPath) {
    const bundled = bundledServerPath(extensionPath, platform);
    if (exists(bundled)) {
      if (platform !== "win32") {
        ensureExecutable(bundled);
      }
      out.push({ source: "bundled", command: bundled });
    }
  }
  out.push({ source: "PATH", command: "forge-lsp" });
  return out;
}

/**
 * ensureExecutable sets the execute bits of the bundled binary when an
 * unpacker dropped them; the package records them, but not every installer
 * keeps them. A failure is left to the probe to report.
 */
function ensureExecutable(p: string): void {
  try {
    const mode = fs.statSync(p).mode;
    if ((mode & 0o111) !== 0o111) {
      fs.chmodSync(p, mode | 0o111);
    }
  } catch {
    // Reported by the probe.
  }
}

/** describeSource is how the output channel names a candidate's origin. */
export function describeSource(source: ServerSource): string {
  switch (source) {
    case "setting":
      return "the promptforge.server.path setting";
    case "bundled":
      return "the binary bundled with the extension";
    default:
      return "PATH";
  }
}

/**
 * resolveServer probes the candidates in order and returns the first that
 * answers `version`. When none does, the message of the last failure says
 * what to do; earlier failures are kept in `tried` for the output channel.
 */
export async function resolveServer(
  candidates: ServerCandidate[],
  probe: (command: string) => Promise<ProbeResult>,
): Promise<Resolved> {
  const tried: string[] = [];
  let last = "PromptForge: no forge-lsp binary to start.";
  for (const c of candidates) {
    const r = await probe(c.command);
    if (r.ok) {
      return { ok: true, source: c.source, command: c.command, version: r.version, tried };
    }
    tried.push(`${c.command} (${describeSource(c.source)}): ${r.message}`);
    last = r.message;
  }
  return { ok: false, message: last, tried };
}
