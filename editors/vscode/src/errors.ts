// Small helpers for the errors the language client and the server hand back.

/** LSP error code for a cancelled request. */
export const REQUEST_CANCELLED = -32800;

/** errorMessage is the message of an Error, or the value as text. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) {
    return err.message;
  }
  return String(err);
}

/** errorCode is the numeric `code` of a JSON-RPC error, if it has one. */
export function errorCode(err: unknown): number | undefined {
  const c = (err as { code?: unknown } | undefined)?.code;
  return typeof c === "number" ? c : undefined;
}
