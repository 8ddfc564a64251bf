// A notebook open in the editor is read as the user sees it (issue 4): the unsaved text of its cells comes
// through LSP notebook sync, the outputs the editor shows through `agentread/notebookOutputs`. Each test
// writes its own notebook into the workspace, so the fixtures the other tests read are left alone.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { makePng } from '../../fixtures';
import { activated, HANG_GUARD_MS, withinHangGuard } from './helpers';

/** The text after the line a read of a notebook the session read before begins with, when it changed since. */
function afterChangeNote(text: string): string {
  return text.replace(/^\[Changed since this session last read [^\n]*\]\n/, '');
}

const TOOL = 'agentread_read';
const LIVE_NOTE = '[Read from the notebook open in the editor: unsaved edits included';

const inWorkspace = (name: string) => path.join(vscode.workspace.workspaceFolders![0].uri.fsPath, name);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Read {
  text: string;
  images: Array<{ mimeType: string; data: Uint8Array }>;
}

async function read(input: Record<string, unknown>): Promise<Read> {
  const result = await vscode.lm.invokeTool(
    TOOL,
    { input, toolInvocationToken: undefined },
    new vscode.CancellationTokenSource().token,
  );
  const text = result.content
    .filter((part): part is vscode.LanguageModelTextPart => part instanceof vscode.LanguageModelTextPart)
    .map((part) => part.value)
    .join('');
  const images = result.content.filter(
    (part): part is { mimeType: string; data: Uint8Array } =>
      typeof (part as { mimeType?: unknown }).mimeType === 'string' &&
      (part as { data?: unknown }).data instanceof Uint8Array,
  );
  return { text, images };
}

/**
 * The editor tells the server of a change a moment after it is made (the notebook sync, the outputs once
 * they settle): reads again, a few times, until the result shows it.
 */
async function readUntil(input: Record<string, unknown>, shows: (result: Read) => boolean): Promise<Read> {
  const deadline = Date.now() + HANG_GUARD_MS;
  let result = await read(input);
  while (!shows(result) && Date.now() < deadline) {
    await sleep(250);
    result = await read(input);
  }
  return result;
}

/** A v4.5 notebook: a markdown cell, then a code cell with a saved stream output. */
function writeNotebook(name: string, code: string, output: string): string {
  const file = inWorkspace(name);
  const notebook = {
    cells: [
      { cell_type: 'markdown', id: 'about', metadata: {}, source: [`# ${name}`] },
      {
        cell_type: 'code',
        id: 'work',
        execution_count: 3,
        metadata: {},
        source: [code],
        outputs: [{ output_type: 'stream', name: 'stdout', text: [`${output}\n`] }],
      },
    ],
    metadata: { language_info: { name: 'python' } },
    nbformat: 4,
    nbformat_minor: 5,
  };
  fs.writeFileSync(file, JSON.stringify(notebook, null, 1) + '\n');
  return file;
}

async function openNotebook(file: string): Promise<vscode.NotebookDocument> {
  const notebook = await vscode.workspace.openNotebookDocument(vscode.Uri.file(file));
  await vscode.window.showNotebookDocument(notebook);
  return notebook;
}

/** Throws away the unsaved changes (a dirty editor would stop a later "close all" with a dialog). */
async function revertAndClose(notebook: vscode.NotebookDocument): Promise<void> {
  if (notebook.isClosed) {
    return;
  }
  await vscode.window.showNotebookDocument(notebook);
  await vscode.commands.executeCommand('workbench.action.files.revert');
  await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
}

describe('agentread reads the notebook open in the editor', () => {
  before(async () => {
    await activated();
  });

  it('returns the unsaved source of an edited cell, and leaves the notebook unsaved', async () => {
    const file = writeNotebook('live-edit.ipynb', "label = 'saved source'", 'saved output 7');
    const notebook = await openNotebook(file);
    try {
      const cell = notebook.cellAt(1);
      assert.equal(cell.kind, vscode.NotebookCellKind.Code);
      const edit = new vscode.WorkspaceEdit();
      const whole = new vscode.Range(new vscode.Position(0, 0), cell.document.lineAt(cell.document.lineCount - 1).range.end);
      edit.replace(cell.document.uri, whole, "label = 'unsaved source'\nprint(label)");
      assert.ok(await vscode.workspace.applyEdit(edit));
      assert.equal(notebook.isDirty, true, 'the edit made the notebook dirty');

      const result = await readUntil({ path: 'live-edit.ipynb' }, ({ text }) => text.includes('unsaved source'));
      assert.match(result.text, /label = 'unsaved source'\n.*print\(label\)/s);
      assert.doesNotMatch(result.text, /'saved source'/, 'the saved source is not returned');
      assert.ok(afterChangeNote(result.text).startsWith(LIVE_NOTE), `the first line says where it was read from:\n${result.text}`);
      assert.doesNotMatch(result.text, /saved after the editor's last change/);
      // The editor still shows the saved output under the edited cell, and so does the read.
      assert.match(result.text, /saved output 7/);
      assert.equal(notebook.isDirty, true, 'the read did not save the notebook');
      assert.match(fs.readFileSync(file, 'utf8'), /'saved source'/, 'the file on disk is unchanged');

      const raw = await read({ path: 'live-edit.ipynb', raw: true });
      assert.match(raw.text, /'saved source'/, 'raw: true reads the file on disk');
      assert.doesNotMatch(raw.text, /unsaved source/);
    } finally {
      await revertAndClose(notebook);
    }
  });

  it('returns the outputs the editor shows for a cell, without running a kernel', async () => {
    const file = writeNotebook('live-outputs.ipynb', 'make_report()', 'stale output 1');
    const notebook = await openNotebook(file);
    const id = 'agentread-e2e-outputs';
    const controller = vscode.notebooks.createNotebookController(id, 'jupyter-notebook', 'agentread e2e (runs nothing)');
    controller.supportedLanguages = ['python'];
    try {
      // Only the controller selected for a notebook may create executions in it. The kernel picker names it
      // '<extension id>/<controller id>'; this suite is loaded outside any extension, so VS Code gives its
      // API the placeholder id 'nullExtensionDescription'.
      const selected = new Promise<void>((resolve) => {
        const listener = controller.onDidChangeSelectedNotebooks((event) => {
          if (event.selected && event.notebook === notebook) {
            listener.dispose();
            resolve();
          }
        });
      });
      controller.updateNotebookAffinity(notebook, vscode.NotebookControllerAffinity.Preferred);
      await vscode.commands.executeCommand('notebook.selectKernel', {
        id,
        extension: 'nullExtensionDescription',
        notebookEditor: vscode.window.activeNotebookEditor,
      });
      await withinHangGuard('the selection of the controller', selected);

      const png = makePng(48, 32);
      const execution = controller.createNotebookCellExecution(notebook.cellAt(1));
      execution.start(Date.now());
      execution.executionOrder = 5;
      // Two outputs: the items of one output are alternative forms of the same thing (the editor shows
      // one of them, the image), as the mime bundle of one nbformat output is.
      await execution.replaceOutput([
        new vscode.NotebookCellOutput([vscode.NotebookCellOutputItem.text('fresh output 42')]),
        new vscode.NotebookCellOutput([new vscode.NotebookCellOutputItem(png, 'image/png')]),
      ]);
      execution.end(true, Date.now());

      const result = await readUntil({ path: 'live-outputs.ipynb' }, ({ text }) => text.includes('fresh output 42'));
      assert.match(result.text, /fresh output 42/);
      assert.doesNotMatch(result.text, /stale output 1/, 'the replaced output is gone');
      assert.match(result.text, /code \(python\) exec=5\nmake_report\(\)/);
      assert.ok(afterChangeNote(result.text).startsWith(`${LIVE_NOTE}, outputs as shown there.]`), `the first line:\n${result.text}`);
      assert.equal(result.images.length, 1, `one image part: ${result.images.map((part) => part.mimeType).join(', ')}`);
      assert.equal(result.images[0].mimeType, 'image/png');
      assert.ok(result.images[0].data.byteLength > 50);
      assert.equal(notebook.isDirty, true, 'the new outputs are unsaved');
      assert.match(fs.readFileSync(file, 'utf8'), /stale output 1/, 'the file on disk is unchanged');
    } finally {
      controller.dispose();
      await revertAndClose(notebook);
    }
  });
});
