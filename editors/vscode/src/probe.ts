// Checking the server binary before the language client starts it, so that a
// wrong path produces one clear message instead of a silent failure or a
// stream of restart attempts.

import { execFile } from "node:child_process";

/** The server version this extension was written against. */
export const EXPECTED_SERVER_VERSION = "0.1.0";

/** Result of running `<server> version`. */
export type ProbeResult =
  | { ok: true; version: string }
  | { ok: false; message: string };

/** parseVersion extracts the version from `forge-lsp version` output ("forge-lsp 0.1.0"). */
export function parseVersion(output: string): string | undefined {
  const m = /^forge-lsp\s+v?(\d+\.\d+\.\d+[0-9A-Za-z.+-]*)\s*$/m.exec(output);
  return m ? m[1] : undefined;
}

/**
 * versionWarning returns a message when the server's version differs from the
 * expected one, or undefined when they match. Only major.minor.patch are
 * compared; build metadata is ignored.
 */
export function versionWarning(actual: string | undefined, expected = EXPECTED_SERVER_VERSION): string | undefined {
  if (!actual) {
    return `The forge-lsp server did not report its version; this extension expects ${expected}.`;
  }
  const core = (v: string) => v.replace(/^v/, "").split(/[+-]/)[0];
  if (core(actual) === core(expected)) {
    return undefined;
  }
  return `forge-lsp ${actual} is running but this extension expects ${expected}; some features may not work. Update forge-lsp or the extension.`;
}

/** A setting name mentioned in the messages so the user knows what to change. */
const PATH_SETTING = "promptforge.server.path";

/**
 * explainSpawnError turns a spawn failure into a message that says what is
 * wrong and what to do.
 */
export function explainSpawnError(serverPath: string, err: NodeJS.ErrnoException & { stderr?: string }): string {
  switch (err.code) {
    case "ENOENT":
      return `PromptForge: the language server '${serverPath}' was not found. Install the PromptForge extension for your platform (it brings forge-lsp), put forge-lsp from a release archive on PATH, or set "${PATH_SETTING}" to its full path.`;
    case "EACCES":
      return `PromptForge: the language server '${serverPath}' is not executable (permission denied). Check "${PATH_SETTING}" and the file's permissions.`;
    case "ENOEXEC":
      return `PromptForge: '${serverPath}' is not a program this machine can run. Check "${PATH_SETTING}".`;
    case "ETIMEDOUT":
      return `PromptForge: '${serverPath} version' did not answer within the time limit. Check "${PATH_SETTING}".`;
  }
  const detail = (err.stderr || err.message || String(err)).trim();
  return `PromptForge: '${serverPath} version' failed: ${detail}. Check "${PATH_SETTING}".`;
}

/**
 * probeServer runs `<serverPath> version` and reports the version or a clear
 * message explaining why the server cannot be used.
 */
export function probeServer(serverPath: string, env?: NodeJS.ProcessEnv, timeoutMs = 10000): Promise<ProbeResult> {
  return new Promise((resolve) => {
    let child;
    try {
      child = execFile(serverPath, ["version"], { env, timeout: timeoutMs, windowsHide: true }, (err, stdout, stderr) => {
        if (err) {
          const e = err as NodeJS.ErrnoException & { killed?: boolean; stderr?: string };
          if (e.killed) {
            e.code = "ETIMEDOUT";
          }
          e.stderr = String(stderr ?? "");
          resolve({ ok: false, message: explainSpawnError(serverPath, e) });
          return;
        }
        const version = parseVersion(String(stdout));
        if (!version) {
          resolve({
            ok: false,
            message: `PromptForge: '${serverPath}' does not look like forge-lsp ('version' printed ${JSON.stringify(String(stdout).trim().slice(0, 80))}). Check "${PATH_SETTING}".`,
          });
          return;
        }
        resolve({ ok: true, version });
      });
    } catch (err) {
      // execFile throws synchronously for some invalid arguments (e.g. an empty path).
      resolve({ ok: false, message: explainSpawnError(serverPath, err as NodeJS.ErrnoException) });
      return;
    }
    child.on("error", () => {
      // Reported through the callback above; the listener keeps the error from being thrown.
    });
  });
}
