// "Show rendered prompt": what the model will see (docs/review.md). The
// server's forge.renderPrompt renders the buffer without running a model
// or a tool; this module holds the logic that does not need the `vscode`
// module: the command names, the lens beside each run lens, and the text
// of the reply.

import { RunArgs, SERVER_RUN_PROMPT, SERVER_RUN_SECTION } from "./run";

/** The server command that renders a prompt. */
export const SERVER_RENDER_PROMPT = "forge.renderPrompt";

/** The editor command behind the lens and the command palette. */
export const CMD_SHOW_RENDERED = "promptforge.showRenderedPrompt";

/** The scheme of the read-only documents that show a rendering. */
export const RENDER_SCHEME = "promptforge-render";

/** What forge.renderPrompt replies. */
export interface RenderReply {
  markdown: string;
  text: string;
  rounds: number;
  tokens: number;
  stopped?: string;
  version: number;
}

/**
 * renderLensCommand returns the command of a "Show rendered prompt" lens for
 * a server lens that runs a section or the prompt, undefined for others.
 */
export function renderLensCommand(lens: { command?: { command: string; arguments?: unknown[] } }):
  { title: string; command: string; arguments: [RunArgs] } | undefined {
  const cmd = lens.command?.command;
  if (cmd !== SERVER_RUN_SECTION && cmd !== SERVER_RUN_PROMPT) {
    return undefined;
  }
  const a = lens.command?.arguments?.[0] as { uri?: unknown; section?: unknown } | undefined;
  if (!a || typeof a.uri !== "string") {
    return undefined;
  }
  const args: RunArgs = { uri: a.uri };
  if (cmd === SERVER_RUN_SECTION) {
    if (typeof a.section !== "string" || a.section === "") {
      return undefined;
    }
    args.section = a.section;
  }
  return { title: "$(eye) Show rendered prompt", command: CMD_SHOW_RENDERED, arguments: [args] };
}

/** isRenderReply checks the shape of the server's reply. */
export function isRenderReply(v: unknown): v is RenderReply {
  if (typeof v !== "object" || v === null) {
    return false;
  }
  const o = v as Record<string, unknown>;
  return typeof o.markdown === "string" && typeof o.text === "string" && typeof o.rounds === "number";
}

/** renderLabel names a rendering's tab. */
export function renderLabel(args: RunArgs): string {
  const file = args.uri.replace(/^.*[\\/]/, "");
  return args.section ? `${args.section} (${decodeURIComponent(file)})` : decodeURIComponent(file);
}
