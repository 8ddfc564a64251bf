// "Show as the agent sees it": a read-only document on the `agentread:` scheme with exactly the text the
// model would get, and the images of the read in a panel beside it.

import * as path from 'node:path';
import * as vscode from 'vscode';
import { agentText, imageCaptions, images } from './convert';
import { describeRange, forwardRead, type ImageContent, type ReadInput, type ReadResult } from './protocol';
import type { ServerManager } from './server';

export const SCHEME = 'agentread';

/** The virtual document's URI: its path names the file for the tab title, its query holds the read. */
export function agentViewUri(input: ReadInput): vscode.Uri {
  // "cell 3", "pages 2–3", "sheet 2", "slides 3–5": the part asked for, in the tab title.
  const range = describeRange({ path: input.path, cells: input.cells, pages: input.pages, view: input.view });
  const label = `${input.path} (agent view${range ? `, ${range}` : ''})`;
  return vscode.Uri.from({ scheme: SCHEME, path: vscode.Uri.file(label).path, query: JSON.stringify(input) });
}

function inputOf(uri: vscode.Uri): ReadInput {
  return JSON.parse(uri.query) as ReadInput;
}

export class AgentView implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly texts = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  private panel: vscode.WebviewPanel | undefined;
  readonly onDidChange = this.changed.event;

  constructor(private readonly server: ServerManager) {}

  /**
   * Reads `input` as the tool would and opens the result. The user asked for this file, so the read has
   * their consent; otherwise it is the model's read exactly.
   */
  async show(input: ReadInput): Promise<{ uri: vscode.Uri; result: ReadResult }> {
    const result = await this.read(input);
    const uri = agentViewUri(input);
    this.texts.set(uri.toString(), agentText(result));
    this.changed.fire(uri);
    const document = await vscode.workspace.openTextDocument(uri);
    // Beside the file, like a preview; in the column of an agent view already open, rather than a new one.
    const column =
      vscode.window.visibleTextEditors.find((editor) => editor.document.uri.scheme === SCHEME)?.viewColumn ??
      vscode.ViewColumn.Beside;
    await vscode.window.showTextDocument(document, { preview: false, viewColumn: column });
    const found = images(result);
    if (found.length > 0) {
      this.showImages(path.basename(input.path), found, imageCaptions(result));
    }
    return { uri, result };
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const known = this.texts.get(uri.toString());
    if (known !== undefined) {
      return known;
    }
    // A document restored with the window: read it again.
    const text = agentText(await this.read(inputOf(uri)));
    this.texts.set(uri.toString(), text);
    return text;
  }

  dispose(): void {
    this.panel?.dispose();
    this.changed.dispose();
  }

  private async read(input: ReadInput): Promise<ReadResult> {
    return await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: `agentread: reading ${path.basename(input.path)}` },
      () => forwardRead(this.server.send, input, true),
    );
  }

  private showImages(name: string, found: ImageContent[], captions: Array<string | undefined>): void {
    if (!this.panel) {
      this.panel = vscode.window.createWebviewPanel(
        'agentread.images',
        `Images: ${name} (agent view)`,
        { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
        { enableScripts: false, retainContextWhenHidden: false },
      );
      this.panel.onDidDispose(() => (this.panel = undefined));
    } else {
      this.panel.reveal(undefined, true);
    }
    this.panel.title = `Images: ${name} (agent view)`;
    this.panel.webview.html = imagesHtml(name, found, captions);
  }
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

/**
 * The images the model receives, in order, each with its size and what the text says of it (a PDF page's
 * picture: its page). Only data: images; no scripts.
 */
export function imagesHtml(name: string, found: readonly ImageContent[], captions: Array<string | undefined> = []): string {
  const figures = found
    .map(
      (image, index) => `
    <figure>
      <img src="data:${escapeHtml(image.mimeType)};base64,${image.data}" width="${image.width}" height="${image.height}"
           alt="image ${index + 1} of ${escapeHtml(name)}">
      <figcaption>Image ${index + 1}: ${escapeHtml(captions[index] ?? `${image.mimeType}, ${image.width}×${image.height}`)}</figcaption>
    </figure>`,
    )
    .join('');
  return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="UTF-8">
  <meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline';">
  <style>
    body { font-family: var(--vscode-font-family); color: var(--vscode-foreground); padding: 0 1em; }
    figure { margin: 1em 0; }
    img { max-width: 100%; height: auto; border: 1px solid var(--vscode-panel-border); background: #fff; }
    figcaption { font-size: 0.9em; opacity: 0.8; margin-top: 0.3em; }
  </style>
</head>
<body>
  <h3>Images the agent receives from ${escapeHtml(name)}</h3>${figures}
</body>
</html>`;
}
