// Logic of running prompts from the editor that does not need the `vscode`
// module: command names, argument shapes, picking the section under the
// cursor and turning the server's answer into text.

/** Server-side commands (workspace/executeCommand) that the code lenses invoke. */
export const SERVER_RUN_SECTION = "forge.runSection";
export const SERVER_RUN_PROMPT = "forge.runPrompt";

/** Editor commands this extension contributes. */
export const CMD_RUN_SECTION = "promptforge.runSection";
export const CMD_RUN_PROMPT = "promptforge.runPrompt";

/** The single JSON argument of forge.runSection / forge.runPrompt. */
export interface RunArgs {
  uri: string;
  section?: string;
  input?: string;
}

/** The parts of an LSP CodeLens this module looks at. */
export interface LensLike {
  range: { start: { line: number } };
  command?: { title: string; command: string; arguments?: unknown[] };
}

/** isRunArgs checks that a value has the shape of RunArgs. */
export function isRunArgs(v: unknown): v is RunArgs {
  if (typeof v !== "object" || v === null) {
    return false;
  }
  const o = v as Record<string, unknown>;
  return (
    typeof o.uri === "string" &&
    (o.section === undefined || typeof o.section === "string") &&
    (o.input === undefined || typeof o.input === "string")
  );
}

/**
 * sectionLensAt returns the run-section lens of the section that contains
 * `line`: the last lens starting at or above it. Lenses sit on their section's
 * heading, so this is the innermost section at the cursor.
 */
export function sectionLensAt(lenses: readonly LensLike[], line: number): LensLike | undefined {
  let best: LensLike | undefined;
  for (const l of lenses) {
    if (l.command?.command !== SERVER_RUN_SECTION || l.range.start.line > line) {
      continue;
    }
    if (!best || l.range.start.line >= best.range.start.line) {
      best = l;
    }
  }
  return best;
}

/** normaliseHeading strips leading #'s and surrounding space for name comparison. */
function normaliseHeading(s: string): string {
  return s.replace(/^\s*#+\s*/, "").trim().toLowerCase();
}

/**
 * sectionLensNamed finds the run-section lens whose section matches `name`,
 * given either as the full address ("## Greet") or the bare heading ("Greet").
 */
export function sectionLensNamed(lenses: readonly LensLike[], name: string): LensLike | undefined {
  const want = normaliseHeading(name);
  const exact = lenses.find((l) => l.command?.command === SERVER_RUN_SECTION && runArgsOf(l)?.section === name);
  if (exact) {
    return exact;
  }
  return lenses.find((l) => {
    const s = runArgsOf(l)?.section;
    return l.command?.command === SERVER_RUN_SECTION && s !== undefined && normaliseHeading(s) === want;
  });
}

/** runArgsOf returns the RunArgs carried by a lens, if it has any. */
export function runArgsOf(l: LensLike): RunArgs | undefined {
  const a = l.command?.arguments?.[0];
  return isRunArgs(a) ? a : undefined;
}

/**
 * resultText turns the value returned by the run command into the text shown
 * to the user. The server returns the run's result; a string is shown as is,
 * an object with a string `result` field shows that field, anything else is
 * pretty-printed JSON.
 */
export function resultText(v: unknown): string {
  if (typeof v === "string") {
    return v;
  }
  if (v === null || v === undefined) {
    return "";
  }
  if (typeof v === "object" && typeof (v as { result?: unknown }).result === "string") {
    return (v as { result: string }).result;
  }
  return JSON.stringify(v, null, 2);
}

/** The three kinds of LSP work-done progress values. */
export interface ProgressValue {
  kind: "begin" | "report" | "end";
  title?: string;
  message?: string;
  percentage?: number;
}

/** progressLine renders a progress value as a transcript line, or undefined when it carries no text. */
export function progressLine(v: ProgressValue): string | undefined {
  const text = [v.title, v.message].filter((s) => s && s.trim() !== "").join(": ");
  if (!text) {
    return undefined;
  }
  switch (v.kind) {
    case "begin":
      return `▶ ${text}`;
    case "end":
      return `■ ${text}`;
    default:
      return `  ${text}`;
  }
}

/** runLabel names a run for titles and messages. */
export function runLabel(args: RunArgs): string {
  const file = decodeURIComponent(args.uri.replace(/^.*\//, ""));
  return args.section ? `${args.section} (${file})` : file;
}
