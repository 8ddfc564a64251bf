// The "Agent reads" view: every call of the tool, newest first; clicking one opens the file at what was read.

import * as path from 'node:path';
import * as vscode from 'vscode';
import { formatSize, resultSize } from './convert';
import type { AgentView } from './agentView';
import {
  describeResult,
  fromEnd,
  type FindHit,
  type ManyFile,
  type ReadInput,
  type ReadManyResult,
  type ReadResult,
  type ResultKind,
} from './protocol';
import { workspaceFolderPaths } from './settings';
import { shownCells, shownLines, toSpans } from './shown';

/** The view keeps the latest calls only: a long session must not grow it without bound. */
const MAX_ENTRIES = 200;

export interface ReadEntry {
  id: number;
  input: ReadInput;
  /** The file read, resolved as the server resolves it. */
  file: string;
  kind: ResultKind;
  /** What was read, in words: "lines 1–120 of 540". */
  range: string;
  /** Bytes the model received; unknown for one file of a read of many. */
  size?: number;
  truncated: boolean;
  isError: boolean;
  error?: string;
  /** The lines the model was shown (the result's `shown.lines`, else its `startLine` and `endLine`). */
  startLine?: number;
  endLine?: number;
  /** The 1-based notebook cells the model was shown, as the result's `shown.cells` names them. */
  cells?: number[];
  /** Passages of the file a person would not see, which the model was shown marked: how many. */
  hidden?: number;
  /** The lines of a `find`'s hits in a text file, each highlighted when the entry is revealed. */
  hitLines?: number[];
  time: Date;
  durationMs: number;
}

export class ReadLog implements vscode.TreeDataProvider<ReadEntry>, vscode.Disposable {
  private entries: ReadEntry[] = [];
  private nextId = 1;
  private readonly changed = new vscode.EventEmitter<ReadEntry | undefined>();
  readonly onDidChangeTreeData = this.changed.event;

  /** The calls so far, newest first. */
  get all(): readonly ReadEntry[] {
    return this.entries;
  }

  record(input: ReadInput, result: ReadResult, started: Date): ReadEntry {
    return this.add(entryFields(input, result, started, resultSize(result)));
  }

  /**
   * A read of many files: an entry for each file the reply showed, whole, cut or as an error, in order. A
   * search's file without a hit is only counted in the reply: it gets none.
   */
  recordMany(result: ReadManyResult, started: Date): void {
    const shown = (file: ManyFile) => file.state !== 'not_shown' && !(file.shown?.hits?.length === 0 && !file.truncated);
    for (const file of (result.files ?? []).filter(shown).reverse()) {
      this.add(entryFields({ path: file.path }, asResult(file), started));
    }
  }

  recordFailure(input: ReadInput, message: string, started: Date): ReadEntry {
    return this.add({
      input,
      file: resolvedFile(input),
      kind: 'error',
      range: 'failed',
      size: Buffer.byteLength(message),
      truncated: false,
      isError: true,
      error: message,
      time: started,
      durationMs: Date.now() - started.getTime(),
    });
  }

  clear(): void {
    this.entries = [];
    this.changed.fire(undefined);
  }

  getTreeItem(entry: ReadEntry): vscode.TreeItem {
    const item = new vscode.TreeItem(path.basename(entry.file) || entry.file);
    // The size of one file of a read of many is not known: its share of the reply is not told apart.
    const what = entry.size === undefined ? [entry.range] : [entry.range, formatSize(entry.size)];
    const flags = [...what];
    if (entry.truncated) {
      flags.push('truncated');
    }
    if (entry.hidden) {
      flags.push(`${entry.hidden} hidden`);
    }
    flags.push(entry.time.toLocaleTimeString());
    item.description = flags.join(' · ');
    item.iconPath = entry.hidden
      ? new vscode.ThemeIcon('warning', new vscode.ThemeColor('list.warningForeground'))
      : new vscode.ThemeIcon(entry.isError ? 'error' : ICONS[entry.kind] ?? 'file');
    const tooltip = new vscode.MarkdownString();
    tooltip.appendMarkdown(`**${escapeMarkdown(entry.file)}**\n\n`);
    tooltip.appendMarkdown(escapeMarkdown(what.join(', ')));
    tooltip.appendMarkdown(entry.truncated ? ', truncated' : '');
    tooltip.appendMarkdown(`, ${entry.durationMs} ms, at ${entry.time.toLocaleString()}\n\n`);
    if (entry.hidden) {
      tooltip.appendMarkdown(
        `$(warning) The file holds ${entry.hidden} passage${entry.hidden === 1 ? '' : 's'} a person reading it would not ` +
          'see (invisible or bidirectional characters, tag characters), shown to the agent marked ⟦…⟧. Text like this ' +
          'can carry instructions meant for the agent alone.\n\n',
      );
      tooltip.supportThemeIcons = true;
    }
    tooltip.appendCodeblock(JSON.stringify(entry.input), 'json');
    if (entry.error) {
      tooltip.appendMarkdown(`\n\n${escapeMarkdown(entry.error)}`);
    }
    item.tooltip = tooltip;
    item.command = { command: 'agentread.revealRead', title: 'Reveal what the agent read', arguments: [entry] };
    item.contextValue = entry.isError ? 'agentread.read.error' : 'agentread.read';
    return item;
  }

  getChildren(entry?: ReadEntry): ReadEntry[] {
    return entry ? [] : this.entries;
  }

  dispose(): void {
    this.changed.dispose();
  }

  private add(fields: Omit<ReadEntry, 'id'>): ReadEntry {
    const entry = { id: this.nextId++, ...fields };
    this.entries = [entry, ...this.entries].slice(0, MAX_ENTRIES);
    this.changed.fire(undefined);
    return entry;
  }
}

const ICONS: Partial<Record<ResultKind, string>> = {
  text: 'file-text',
  notebook: 'notebook',
  pdf: 'file-pdf',
  image: 'file-media',
  directory: 'folder',
  archive: 'file-zip',
  document: 'file-text',
  spreadsheet: 'table',
  presentation: 'preview',
};

/** What the view shows of one read; `size` is the bytes the model received, when known. */
function entryFields(input: ReadInput, result: ReadResult, started: Date, size?: number): Omit<ReadEntry, 'id'> {
  const [startLine, endLine] = shownLines(result) ?? [result.startLine, result.endLine];
  const hits = result.isError ? undefined : result.shown?.hits;
  return {
    input,
    file: resolvedFile(input, result),
    kind: result.kind,
    range: describeResult(result, input),
    size,
    truncated: result.truncated,
    isError: result.isError,
    error: result.error?.message,
    hidden: hiddenCount(result),
    startLine,
    endLine,
    cells: result.kind === 'notebook' ? (hits ? hitCells(hits) : shownCells(result)) : undefined,
    hitLines: hits && result.kind === 'text' ? hits.map((hit) => hit.line ?? 0).filter((line) => line > 0) : undefined,
    time: started,
    durationMs: Date.now() - started.getTime(),
  };
}

/** How many hidden passages a read showed the model marked; undefined for none. */
function hiddenCount(result: ReadResult): number | undefined {
  const total = Object.values(result.hidden ?? {}).reduce((sum, n) => sum + n, 0);
  return total > 0 ? total : undefined;
}

/** The notebook cells a find's hits are in. */
function hitCells(hits: readonly FindHit[]): number[] {
  return hits.map((hit) => hit.cell).filter((cell): cell is number => typeof cell === 'number');
}

/** One file of a read of many, as the single read's result it stands for (its text is in the whole reply). */
function asResult(file: ManyFile): ReadResult {
  return {
    kind: file.kind ?? 'error',
    path: file.path,
    content: [],
    truncated: file.truncated ?? false,
    next: file.next,
    shown: file.shown,
    hidden: file.hidden,
    isError: file.state === 'error',
    error: file.error,
  };
}

function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>]/g, '\\$&');
}

/** The file a read showed: the real path the server read, else the path asked for, from the first folder. */
function resolvedFile(input: ReadInput, result?: ReadResult): string {
  if (result && !result.isError && result.path) {
    return result.path;
  }
  if (typeof input?.path === 'string' && input.path) {
    return path.resolve(workspaceFolderPaths()[0] ?? '', input.path);
  }
  return result?.path ?? '';
}

/**
 * Opens the file of a read and shows what the model was shown: the lines selected and highlighted, the
 * notebook cells selected; a PDF or an Office file (no editor in VS Code selects pages in those) opens the
 * agent view of the same read.
 */
export class ReadRevealer implements vscode.Disposable {
  private readonly highlight = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    backgroundColor: new vscode.ThemeColor('editor.rangeHighlightBackground'),
    overviewRulerColor: new vscode.ThemeColor('editorOverviewRuler.rangeHighlightForeground'),
    overviewRulerLane: vscode.OverviewRulerLane.Full,
  });

  constructor(private readonly agentView: AgentView) {}

  async reveal(entry: ReadEntry): Promise<void> {
    const uri = vscode.Uri.file(entry.file);
    if (entry.input?.outline === true && entry.kind !== 'notebook' && entry.kind !== 'directory' && !entry.isError) {
      return this.showAgentView(entry); // the outline itself, as the model got it
    }
    if (!(await isOnDisk(uri))) {
      return this.showAgentView(entry); // a member inside an archive: no editor opens it, the agent view reads it
    }
    switch (entry.kind) {
      case 'notebook':
        return this.revealCells(uri, entry);
      case 'directory':
      case 'archive':
        await vscode.commands.executeCommand('revealInExplorer', uri);
        return;
      case 'pdf':
      case 'document':
      case 'spreadsheet':
      case 'presentation':
      case 'mail': // numbered as rendered, not as the file's source lines
      case 'rtf':
        return this.showAgentView(entry);
      case 'image':
        return this.openFile(uri);
      default:
        return entry.hitLines ? this.revealHits(uri, entry.hitLines) : this.revealLines(uri, entry.startLine, entry.endLine);
    }
  }

  /** Opens a text file at a find's first hit, every hit's line highlighted. */
  private async revealHits(uri: vscode.Uri, lines: readonly number[]): Promise<void> {
    if (lines.length === 0) {
      return this.openFile(uri);
    }
    await this.revealLines(uri, lines[0], lines[0]);
    const editor = vscode.window.activeTextEditor;
    if (editor?.document.uri.toString() === uri.toString()) {
      const last = editor.document.lineCount;
      editor.setDecorations(
        this.highlight,
        lines.filter((line) => line <= last).map((line) => editor.document.lineAt(line - 1).range),
      );
    }
  }

  dispose(): void {
    this.highlight.dispose();
  }

  /**
   * The read again, as the model got it: pages, slides, sheets or lines, with its images beside. The user
   * asked for it with a click, as with "Show as the agent sees it".
   */
  private showAgentView(entry: ReadEntry): Promise<void> {
    return warnOnFailure(`show ${entry.file}`, () => this.agentView.show({ ...entry.input, path: entry.file }));
  }

  /** Opens a file in whatever editor VS Code has for it. */
  private openFile(uri: vscode.Uri): Promise<void> {
    return warnOnFailure(`open ${uri.fsPath}`, () => vscode.commands.executeCommand('vscode.open', uri));
  }

  private async revealLines(uri: vscode.Uri, startLine?: number, endLine?: number): Promise<void> {
    let document: vscode.TextDocument;
    try {
      document = await vscode.workspace.openTextDocument(uri);
    } catch {
      await vscode.commands.executeCommand('vscode.open', uri);
      return;
    }
    const editor = await vscode.window.showTextDocument(document, { preview: true });
    if (startLine === undefined || endLine === undefined || document.lineCount === 0) {
      return;
    }
    if (startLine < 0) {
      // Lines counted from the end of a file too large to count when it was read.
      const lastLine = document.lineAt(document.lineCount - 1);
      const endsWithLineBreak = document.lineCount > 1 && lastLine.text === '';
      startLine = fromEnd(startLine, document.lineCount, endsWithLineBreak);
      endLine = fromEnd(endLine, document.lineCount, endsWithLineBreak);
    }
    const first = Math.min(Math.max(startLine, 1), document.lineCount) - 1;
    const last = Math.min(Math.max(endLine, startLine), document.lineCount) - 1;
    const range = new vscode.Range(first, 0, last, document.lineAt(last).range.end.character);
    editor.selection = new vscode.Selection(range.start, range.start);
    editor.setDecorations(this.highlight, [range]);
    editor.revealRange(range, vscode.TextEditorRevealType.AtTop);
  }

  /**
   * Selects the cells the model was shown (several ranges for a list) and scrolls to the first. A result that
   * names no cell (an older server, an empty notebook) opens the notebook with nothing selected.
   */
  private async revealCells(uri: vscode.Uri, entry: ReadEntry): Promise<void> {
    const notebook = await vscode.workspace.openNotebookDocument(uri);
    const editor = await vscode.window.showNotebookDocument(notebook, { preview: true });
    const ranges = toSpans(entry.cells ?? [])
      .map(([start, end]) => new vscode.NotebookRange(Math.min(start, notebook.cellCount), Math.min(end, notebook.cellCount)))
      .filter((range) => !range.isEmpty);
    if (ranges.length === 0) {
      return;
    }
    editor.selections = ranges;
    editor.revealRange(ranges[0], vscode.NotebookEditorRevealType.AtTop);
  }
}

/** Runs what a click in the view asked for; a failure (a file gone since the read) is told, not thrown. */
async function warnOnFailure(what: string, action: () => Thenable<unknown>): Promise<void> {
  try {
    await action();
  } catch (error) {
    void vscode.window.showWarningMessage(
      `agentread: cannot ${what}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

async function isOnDisk(uri: vscode.Uri): Promise<boolean> {
  try {
    await vscode.workspace.fs.stat(uri);
    return true;
  } catch {
    return false;
  }
}
