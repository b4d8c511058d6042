// What-if actions of the promptforge debugger (docs/debugging.md#what-if):
// "Re-run from this section" in the Call Stack and "Edit reply and re-run"
// in the Variables view. Both are DAP requests the adapter answers by
// re-running the prompt from its recording; VS Code's own Set Value,
// Restart Frame, Step Back and Reverse work without them.

/** The part of vscode.DebugSession the actions use. */
export interface DapSession {
  customRequest(command: string, args?: unknown): Thenable<unknown>;
}

/** A variable as the Variables view's context menu passes it. */
export interface VariableContext {
  container?: { variablesReference?: number; name?: string };
  variable?: { name?: string; value?: string; variablesReference?: number };
}

/** rerunSection re-runs the prompt from the entry of frameId's section. */
export async function rerunSection(session: DapSession, frameId: number | undefined): Promise<void> {
  if (frameId === undefined) {
    throw new Error("PromptForge: select a frame in the Call Stack of a stopped run first");
  }
  await session.customRequest("restartFrame", { frameId });
}

/** replyTarget checks that the context is the Run scope's `reply` and returns its container. */
export function replyTarget(ctx: VariableContext | undefined): { ref: number; current: string } {
  const ref = ctx?.container?.variablesReference;
  if (ctx?.variable?.name !== "reply" || ref === undefined) {
    throw new Error("PromptForge: pick `reply` in the Run scope, at a stop after a model reply (step over a prose block)");
  }
  const v = ctx.variable.value ?? "";
  let current = v;
  try {
    const parsed: unknown = JSON.parse(v);
    if (typeof parsed === "string") {
      current = parsed;
    }
  } catch {
    // Not a quoted string: edit the text as shown.
  }
  return { ref, current };
}

/** editReply sets the reply to text, then re-runs the section from its entry with it. */
export async function editReply(session: DapSession, ctx: VariableContext | undefined, text: string, frameId: number | undefined): Promise<void> {
  const { ref } = replyTarget(ctx);
  await session.customRequest("setVariable", { variablesReference: ref, name: "reply", value: JSON.stringify(text) });
  await rerunSection(session, frameId);
}
