// Run results as read-only documents: each result of Run Section or Run
// Prompt opens as a virtual document (scheme promptforge-result) that the
// editor shows without asking to save it on close, unlike an Untitled one.

import * as vscode from "vscode";

export const RESULT_SCHEME = "promptforge-result";

/** ResultDocuments serves the text of each run result by its URI. */
export class ResultDocuments implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();
  private count = 0;

  constructor(
    private readonly scheme = RESULT_SCHEME,
    private readonly prefix = "Result of",
  ) {}

  /** add keeps a result and returns the URI that opens it. */
  add(label: string, text: string): vscode.Uri {
    this.count++;
    // The .md extension gives the document Markdown highlighting; the
    // query keeps two results of the same section apart.
    const name = `${this.prefix} ${label}`.replace(/[\\/:*?"<>|#]/g, " ").replace(/\s+/g, " ").trim();
    const uri = vscode.Uri.parse(`${this.scheme}:/${encodeURIComponent(name)}.md?${this.count}`);
    this.texts.set(uri.toString(), text);
    return uri;
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? "";
  }
}
