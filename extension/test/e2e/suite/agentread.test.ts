// Integration tests inside a real VS Code (code-server) with the .vsix installed. The workspace is made by
// the driver from test/fixtures.ts: lines.txt, analysis.ipynb (with a PNG output), report.pdf, scan.pdf (a page
// that is only a picture), a .docx, .xlsx and .pptx, .env, and ../outside/notes.txt beside it.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { agentText } from '../../../src/convert';
import type { AgentreadApi } from '../../../src/extension';
import {
  ARCHIVE,
  FIGURE_PDF,
  OFFICE_FILES,
  PDF_PAGES,
  QUOTING_CELLS,
  textLine,
  WHISPER_FILE,
  WHISPERED,
} from '../../fixtures';
import { activated, HANG_GUARD_MS, textOf, waitFor, withinHangGuard } from './helpers';

const TOOL = 'agentread_read';

const workspace = () => vscode.workspace.workspaceFolders![0].uri.fsPath;
const inWorkspace = (name: string) => path.join(workspace(), name);
const outsideFile = () => path.join(workspace(), '..', 'outside', 'notes.txt');

function invoke(input: Record<string, unknown>): Thenable<vscode.LanguageModelToolResult> {
  return vscode.lm.invokeTool(TOOL, { input, toolInvocationToken: undefined }, new vscode.CancellationTokenSource().token);
}

interface DataPartLike {
  mimeType: string;
  data: Uint8Array;
}

function dataParts(result: vscode.LanguageModelToolResult): DataPartLike[] {
  return result.content.filter(
    (part): part is DataPartLike =>
      typeof (part as DataPartLike).mimeType === 'string' && (part as DataPartLike).data instanceof Uint8Array,
  );
}

function activeUri(): vscode.Uri | undefined {
  return vscode.window.activeTextEditor?.document.uri;
}

describe('agentread in VS Code', () => {
  let api: AgentreadApi;

  before(async () => {
    api = await activated();
  });

  it('registers the tool for the language model', () => {
    const tool = vscode.lm.tools.find((candidate) => candidate.name === TOOL);
    assert.ok(tool, 'agentread_read is listed in vscode.lm.tools');
    assert.match(tool.description, /offset/);
    assert.deepEqual((tool.inputSchema as { required: string[] }).required, ['path']);
  });

  it('checked the interpreter against the requirements the installed .vsix carries', () => {
    const probe = api.server.interpreter?.probe;
    assert.ok(probe, 'the server was started with a probed interpreter');
    for (const name of ['pygls', 'pypdfium2', 'python-docx', 'openpyxl', 'python-pptx']) {
      assert.ok(probe.requirements?.some((requirement) => requirement.startsWith(name)), `${name} is checked`);
    }
    assert.deepEqual(probe.unmet, []);
    // The .vsix `npm run package` builds with no arguments, as published: every version the README names.
    assert.deepEqual(probe.bundled, ['3.10', '3.11', '3.12', '3.13']);
    assert.ok(probe.bundled?.includes(probe.version.join('.')));
  });

  it('reads a text file with the editor line numbers', async () => {
    const text = textOf(await invoke({ path: 'lines.txt', offset: 11, limit: 5 }));
    assert.match(text, new RegExp(`^    11\\t${textLine(11)}$`, 'm'));
    assert.match(text, new RegExp(`^    15\\t${textLine(15)}$`, 'm'));
    assert.doesNotMatch(text, /^    16\t/m);
  });

  it('passes since on: a changed file is answered with its diff, an unchanged one with one line', async () => {
    const file = inWorkspace('versioned.txt');
    const lines = Array.from({ length: 30 }, (_, n) => `row ${n + 1}`);
    fs.writeFileSync(file, lines.join('\n') + '\n');
    try {
      const first = textOf(await invoke({ path: 'versioned.txt', limit: 5 }));
      const version = /^\[version (\w+)\] \[Showing .* to continue\.\]$/.exec(first.split('\n').at(-1) ?? '')?.[1];
      assert.ok(version, `the last line gives the version, then how to continue: ${first}`);
      const same = textOf(await invoke({ path: 'versioned.txt', since: version }));
      assert.match(same, /^\[Unchanged: /);
      assert.equal(same.split('\n').length, 1);
      lines[19] = 'row twenty, edited';
      fs.writeFileSync(file, lines.join('\n') + '\n');
      const changed = textOf(await invoke({ path: 'versioned.txt', offset: 18, limit: 5, since: version }));
      assert.match(changed, /^\[Changed: /);
      assert.match(changed, /^-row 20\n\+row twenty, edited$/m);
      assert.match(changed, /^@@ -17,7 \+17,7 @@$/m);
    } finally {
      fs.rmSync(file, { force: true });
    }
  });

  it('returns a notebook image output as an image data part', async () => {
    const result = await invoke({ path: inWorkspace('analysis.ipynb') });
    const images = dataParts(result);
    assert.equal(images.length, 1, `parts: ${result.content.map((part) => (part as object).constructor.name).join(', ')}`);
    assert.match(images[0].mimeType, /^image\/(png|jpeg)$/);
    assert.ok(images[0].data.byteLength > 100);
    assert.match(textOf(result), /print\(total\)/);
  });

  it('reads a PDF page range', async () => {
    const text = textOf(await invoke({ path: 'report.pdf', pages: '2-3' }));
    assert.match(text, /--- Page 2 ---/);
    assert.match(text, /This is page 3 of the test report/);
    assert.doesNotMatch(text, /--- Page 1 ---/);
    assert.ok(PDF_PAGES > 3);
  });

  it('returns a scanned PDF page as an image the model can see', async () => {
    const result = await invoke({ path: 'scan.pdf' });
    assert.match(textOf(result), /Page 1 has no extractable text/);
    const images = dataParts(result);
    assert.equal(images.length, 1);
    assert.match(images[0].mimeType, /^image\/(png|jpeg)$/);
  });

  it('says a PDF page holds a figure, and sends the page as a picture when asked', async () => {
    const plain = await invoke({ path: FIGURE_PDF });
    assert.match(textOf(plain), /\[Page 1 has 1 figure \(images or drawings\) that its text does not show\. .*pages="1" and view="image"\.\]/);
    assert.equal(dataParts(plain).length, 0);
    const pictured = await invoke({ path: FIGURE_PDF, pages: '1', view: 'image' });
    const [picture, ...more] = dataParts(pictured);
    assert.equal(more.length, 0);
    assert.equal(picture.mimeType, 'image/png');
    // The PNG's own header: the page is drawn to the image budget's long side (2000 px).
    const header = Buffer.from(picture.data.buffer, picture.data.byteOffset, 24);
    assert.equal(Math.max(header.readUInt32BE(16), header.readUInt32BE(20)), 2000);
    assert.match(textOf(pictured), /^--- Page 1 ---\n/);
    assert.match(textOf(pictured), /\[Page 1 as a picture, \d+x2000:\]/);
  });

  it('reads text only when asked: no picture, and one line saying so', async () => {
    const result = await invoke({ path: 'scan.pdf', view: 'text' });
    assert.equal(dataParts(result).length, 0);
    assert.match(textOf(result), /\[1 picture left out: this read asked for text only \(view="text"\)\. Call again without view to see it\.\]\n\[version [^\n]*\]$/);
  });

  it('reads a Word document, a workbook sheet and a slide', async () => {
    const docx = textOf(await invoke({ path: OFFICE_FILES.docx }));
    assert.match(docx, /^     1\t# python-docx was here!$/m);
    const sheet = textOf(await invoke({ path: OFFICE_FILES.xlsx, pages: 'other', offset: 6, limit: 2 }));
    assert.match(sheet, /--- Sheet 2 "other"/);
    assert.match(sheet, /^\| 6 \| Vera Rubin \| scientist \| =DATEDIF\(E6,F6,"y"\) → 88 \|/m);
    assert.doesNotMatch(sheet, /^\| 5 \|/m);
    const deck = await invoke({ path: OFFICE_FILES.pptx, pages: '1' });
    assert.match(textOf(deck), /--- Slide 1 ---/);
    assert.match(textOf(deck), /^\s+\d+\t\| Cell text 1 \| Cell text 2 \|$/m);
    assert.deepEqual(dataParts(deck).map((part) => part.mimeType).sort(), ['image/gif', 'image/jpeg'].sort());
    assert.equal(api.reads.all[0].range, 'slide 1 of 1');
    assert.match(sheet, /pages="2" and offset=8/);
  });

  it('gives the model an error it can act on as text', async () => {
    const result = await invoke({ path: 'no-such-file.txt' });
    assert.match(textOf(result), /^Error: /);
    const malformed = await invoke({ path: 'lines.txt', offset: 0 });
    assert.match(textOf(malformed), /^Error: invalid arguments/);
  });

  it('reads the unsaved contents of an open editor', async () => {
    const document = await vscode.workspace.openTextDocument(inWorkspace('lines.txt'));
    await vscode.window.showTextDocument(document);
    const edit = new vscode.WorkspaceEdit();
    edit.replace(document.uri, document.lineAt(0).range, 'edited but not saved');
    assert.ok(await vscode.workspace.applyEdit(edit));
    try {
      const text = textOf(await invoke({ path: 'lines.txt', limit: 2 }));
      assert.match(text, /^     1\tedited but not saved$/m);
    } finally {
      await vscode.commands.executeCommand('workbench.action.files.revert');
      await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
    }
    const text = textOf(await invoke({ path: 'lines.txt', limit: 1 }));
    assert.match(text, new RegExp(`^     1\\t${textLine(1)}$`, 'm'));
  });

  it('needs consent outside the workspace: the server refuses without it', async () => {
    const result = await api.read({ path: outsideFile() });
    assert.equal(result.isError, true);
    assert.equal(result.error?.code, 'outside_workspace');
    const sensitive = await api.read({ path: '.env' });
    assert.equal(sensitive.error?.code, 'sensitive_file');
    const allowed = await api.read({ path: outsideFile(), consent: true });
    assert.match(agentText(allowed), /outside the workspace/);
  });

  it('asks for confirmation only outside the workspace and for sensitive files', async () => {
    const token = new vscode.CancellationTokenSource().token;
    const prepare = (input: { path: string; cells?: string }) => api.tool.prepareInvocation({ input }, token);
    const outside = await prepare({ path: outsideFile() });
    assert.ok(outside.confirmationMessages, 'a read outside the workspace is confirmed');
    assert.match(outside.confirmationMessages.title, /outside the workspace/);
    const env = await prepare({ path: '.env' });
    assert.ok(env.confirmationMessages, 'a sensitive file is confirmed');
    const link = await prepare({ path: 'link-to-outside.txt' });
    assert.ok(link.confirmationMessages, 'a link leading outside is confirmed');
    const plain = await prepare({ path: 'lines.txt' });
    assert.equal(plain.confirmationMessages, undefined);
    const notebook = await prepare({ path: inWorkspace('analysis.ipynb'), cells: '3-7' });
    assert.equal(notebook.invocationMessage, 'Reading analysis.ipynb, cells 3–7');
  });

  // What VS Code 1.100 (code-server 4.100.3) does with a tool call that has no chat invocation token, as
  // these calls: it calls prepareInvocation, and when that returns confirmationMessages it asks through its
  // dialog service. But while the workbench runs extension tests (extensionTestsPath set, as here) the dialog
  // service shows no dialog: its confirm() answers "confirmed" at once, and its prompt(), which agentread's own
  // question goes through, refuses (DialogService.skipDialogs). So here the chat-level confirmation passes
  // and agentread's question, which no approval of the tool skips, is a denial: the file never reaches the
  // model. The chat suite (npm run test:chat) answers the real question.
  it('reads outside the workspace only once the user allowed the file in agentread\'s own question', async () => {
    const input = { path: '../outside/notes.txt' };
    const confirmed = textOf(await invoke(input));
    assert.doesNotMatch(confirmed, /a note kept outside/);
    assert.match(confirmed, /^Error: The user declined to let you read \.\.\/outside\/notes\.txt \(outside the workspace\)/);
    assert.match(confirmed, /Do not try to reach this file another way/);
    assert.equal(api.reads.all[0].isError, true);
    // Invoked with no confirmation asked first: the same question, the same answer.
    const tokens = new vscode.CancellationTokenSource();
    const direct = await withinHangGuard(
      'the refusal',
      Promise.resolve(api.tool.invoke({ input, toolInvocationToken: undefined }, tokens.token)),
    );
    assert.doesNotMatch(textOf(direct), /a note kept outside/);
    assert.match(textOf(direct), /^Error: The user declined/);
    const env = textOf(await api.tool.invoke({ input: { path: '.env' }, toolInvocationToken: undefined }, tokens.token));
    assert.doesNotMatch(env, /not-a-real-token/);
    assert.match(env, /matches "\.env"/);
  });

  it('lists each tool call in the Agent reads view and reveals the lines read', async () => {
    await invoke({ path: 'lines.txt', offset: 40, limit: 10 });
    const entry = api.reads.all[0];
    assert.equal(path.basename(entry.file), 'lines.txt');
    assert.equal(entry.range, 'lines 40–49 of 120');
    assert.equal(entry.truncated, true);
    const item = api.reads.getTreeItem(entry);
    assert.match(String(item.description), /lines 40–49 of 120 · \d/);
    assert.equal(item.command?.command, 'agentread.revealRead');
    await vscode.commands.executeCommand('agentread.revealRead', entry);
    const editor = vscode.window.activeTextEditor;
    assert.equal(editor?.document.uri.fsPath, inWorkspace('lines.txt'));
    assert.equal(editor?.selection.start.line, 39);
    await waitFor('the lines read to scroll into view', () =>
      Boolean(editor?.visibleRanges.some((range) => range.contains(new vscode.Position(45, 0)))),
    HANG_GUARD_MS);
  });

  it('marks hidden words for the agent and warns in the Agent reads view', async () => {
    const text = textOf(await invoke({ path: WHISPER_FILE }));
    assert.match(text, /^\[Hidden from a person reading the file: 1 run of tag characters;/);
    assert.ok(text.includes(`All tests pass.\u27e6hidden: tag characters "${WHISPERED}"\u27e7`), text);
    assert.doesNotMatch(text, /[\u{e0000}-\u{e007f}]/u);
    const entry = api.reads.all[0];
    assert.equal(entry.hidden, 1);
    const item = api.reads.getTreeItem(entry);
    assert.match(String(item.description), /1 hidden/);
    assert.equal((item.iconPath as vscode.ThemeIcon).id, 'warning');
    assert.match((item.tooltip as vscode.MarkdownString).value, /would not see/);
  });

  it('lists a find in the Agent reads view and reveals its hit', async () => {
    const text = textOf(await invoke({ path: 'lines.txt', find: 'line 42:' }));
    assert.match(text, /^line 42: line 42: .*\[read: offset=42, limit=1\]$/m);
    const entry = api.reads.all[0];
    assert.equal(entry.range, '1 hit of "line 42:"');
    await vscode.commands.executeCommand('agentread.revealRead', entry);
    assert.equal(vscode.window.activeTextEditor?.document.uri.fsPath, inWorkspace('lines.txt'));
    assert.equal(vscode.window.activeTextEditor?.selection.start.line, 41);
  });

  it('lists an outline in the Agent reads view and shows a document\'s outline as the agent sees it', async () => {
    const text = textOf(await invoke({ path: 'report.pdf', outline: true }));
    assert.match(text, new RegExp(`has no bookmarks.*it has ${PDF_PAGES} pages`));
    assert.equal(api.reads.all[0].range, 'outline, no entries');
    const file = inWorkspace('report.pdf');
    await vscode.commands.executeCommand('agentread.showOutlineAsAgentSees', vscode.Uri.file(file));
    assert.equal(activeUri()?.scheme, 'agentread');
    const expected = agentText(await api.read({ path: file, outline: true, consent: true }));
    assert.equal(vscode.window.activeTextEditor?.document.getText(), expected);
  });

  it('reads the end of a file with a negative offset and reveals those lines', async () => {
    const text = textOf(await invoke({ path: 'lines.txt', offset: -5 }));
    assert.match(text, /^   116\t/m);
    assert.match(text, /^   120\t/m);
    const entry = api.reads.all[0];
    assert.equal(entry.range, 'lines 116–120 of 120');
    await vscode.commands.executeCommand('agentread.revealRead', entry);
    assert.equal(vscode.window.activeTextEditor?.selection.start.line, 115);
  });

  it('reveals the cells of a notebook read', async () => {
    await invoke({ path: 'analysis.ipynb', cells: '2-3' });
    await vscode.commands.executeCommand('agentread.revealRead', api.reads.all[0]);
    const editor = vscode.window.activeNotebookEditor;
    assert.equal(editor?.notebook.uri.fsPath, inWorkspace('analysis.ipynb'));
    assert.equal(editor?.selection.start, 1);
    assert.equal(editor?.selection.end, 3);
  });

  it('reveals the cells a read showed: all of a whole-notebook read, each range of a list', async () => {
    const selected = () => vscode.window.activeNotebookEditor?.selections.map((range) => [range.start, range.end]);
    await invoke({ path: 'analysis.ipynb' });
    assert.deepEqual(api.reads.all[0].cells, [1, 2, 3]);
    assert.equal(api.reads.all[0].range, '3 cells');
    await vscode.commands.executeCommand('agentread.revealRead', api.reads.all[0]);
    assert.equal(vscode.window.activeNotebookEditor?.notebook.uri.fsPath, inWorkspace('analysis.ipynb'));
    assert.deepEqual(selected(), [[0, 3]]);
    await invoke({ path: 'analysis.ipynb', cells: '1,3' });
    assert.equal(api.reads.all[0].range, 'cells 1, 3 of 3');
    await vscode.commands.executeCommand('agentread.revealRead', api.reads.all[0]);
    assert.deepEqual(selected(), [[0, 1], [2, 3]]);
    await invoke({ path: 'analysis.ipynb', cells: 'plot' });
    await vscode.commands.executeCommand('agentread.revealRead', api.reads.all[0]);
    assert.deepEqual(selected(), [[2, 3]]);
  });

  it('selects the cells the result names, not a header a cell quotes', async () => {
    // Cell 2's source quotes the header of cell 7: the text alone would name cells 1, 2 and 7.
    await invoke({ path: 'quoting.ipynb', cells: '1-3' });
    const entry = api.reads.all[0];
    assert.deepEqual(entry.cells, [1, 2, 3]);
    assert.equal(entry.range, `cells 1–3 of ${QUOTING_CELLS}`);
    await vscode.commands.executeCommand('agentread.revealRead', entry);
    const editor = vscode.window.activeNotebookEditor;
    assert.equal(editor?.notebook.uri.fsPath, inWorkspace('quoting.ipynb'));
    assert.deepEqual(editor?.selections.map((range) => [range.start, range.end]), [[0, 3]]);
  });

  it('reveals a PDF read as the agent saw it: the same pages', async () => {
    await invoke({ path: 'report.pdf', pages: '2-3' });
    const entry = api.reads.all[0];
    assert.equal(entry.range, `pages 2–3 of ${PDF_PAGES}`);
    await vscode.commands.executeCommand('agentread.revealRead', entry);
    assert.equal(activeUri()?.scheme, 'agentread');
    const text = vscode.window.activeTextEditor?.document.getText() ?? '';
    assert.match(text, /^--- Page 2 ---$/m);
    assert.match(text, /^--- Page 3 ---$/m);
    assert.doesNotMatch(text, /--- Page (1|4) ---/);
  });

  it('reveals a read of a member inside an archive as the agent saw it', async () => {
    const text = textOf(await invoke({ path: `${ARCHIVE}/docs/readme.md` }));
    assert.match(text, /^ {5}3\tA readme kept inside a zip archive\.$/m);
    await vscode.commands.executeCommand('agentread.revealRead', api.reads.all[0]);
    assert.equal(activeUri()?.scheme, 'agentread');
    assert.match(vscode.window.activeTextEditor?.document.getText() ?? '', /A readme kept inside a zip archive\./);
  });

  it('reveals a read of pages as pictures with the pictures that were sent', async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await invoke({ path: FIGURE_PDF, pages: '1', view: 'image' });
    const entry = api.reads.all[0];
    await vscode.commands.executeCommand('agentread.revealRead', entry);
    assert.equal(activeUri()?.scheme, 'agentread');
    assert.match(decodeURIComponent(activeUri()!.path), /page 1, as pictures\)$/);
    assert.match(vscode.window.activeTextEditor?.document.getText() ?? '', /^\[Page 1 as a picture, \d+x2000:\]$/m);
    const tabs = () => vscode.window.tabGroups.all.flatMap((group) => group.tabs);
    await waitFor(
      `the images panel among ${tabs().map((tab) => tab.label).join(', ')}`,
      () => tabs().some((tab) => tab.input instanceof vscode.TabInputWebview && tab.label.startsWith(`Images: ${FIGURE_PDF}`)),
      HANG_GUARD_MS,
    );
  });

  it('shows a file as the agent sees it', async () => {
    const file = inWorkspace('lines.txt');
    await vscode.commands.executeCommand('agentread.showAsAgentSees', vscode.Uri.file(file));
    const uri = activeUri();
    assert.equal(uri?.scheme, 'agentread');
    const expected = agentText(await api.read({ path: file, consent: true }));
    assert.equal(vscode.window.activeTextEditor?.document.getText(), expected);
    assert.match(expected, /^     1\tline 1: /);
  });

  it('shows a notebook as the agent sees it, with its images beside', async () => {
    await vscode.commands.executeCommand('agentread.showAsAgentSees', vscode.Uri.file(inWorkspace('analysis.ipynb')));
    assert.equal(activeUri()?.scheme, 'agentread');
    assert.match(vscode.window.activeTextEditor!.document.getText(), /\[image 1: output 1, image\/\w+ \d+x\d+, attached\]/);
    const tabs = () => vscode.window.tabGroups.all.flatMap((group) => group.tabs);
    await waitFor(
      `the images panel among ${tabs().map((tab) => tab.label).join(', ')}`,
      () => tabs().some((tab) => tab.input instanceof vscode.TabInputWebview && tab.label.startsWith('Images: analysis.ipynb')),
      HANG_GUARD_MS,
    );
  });

  it('shows one notebook cell as the agent sees it', async () => {
    const notebook = await vscode.workspace.openNotebookDocument(vscode.Uri.file(inWorkspace('analysis.ipynb')));
    await vscode.window.showNotebookDocument(notebook);
    await vscode.commands.executeCommand('agentread.showCellAsAgentSees', notebook.cellAt(1));
    const text = vscode.window.activeTextEditor?.document.getText() ?? '';
    assert.equal(activeUri()?.scheme, 'agentread');
    assert.match(text, /print\(total\)/);
    assert.doesNotMatch(text, /A small analysis/);
  });

  it('restarts the server on command, and the next call answers', async () => {
    const before = api.server.pid;
    await vscode.commands.executeCommand('agentread.restartServer');
    assert.equal(api.server.state, 'running');
    assert.notEqual(api.server.pid, before);
    assert.match(textOf(await invoke({ path: 'lines.txt', limit: 1 })), /^     1\t/m);
  });

  it('starts a server that died again, and the next call answers', async () => {
    const pid = api.server.pid;
    assert.ok(pid);
    process.kill(pid, 'SIGKILL');
    await waitFor('the server to stop', () => api.server.pid !== pid, 60_000);
    assert.match(textOf(await invoke({ path: 'lines.txt', limit: 1 })), /^     1\t/m);
    assert.equal(api.server.state, 'running');
  });

  it('leaves the editor showing what the agent read (for the screenshot)', async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await invoke({ path: 'lines.txt', offset: 20, limit: 12 });
    await vscode.commands.executeCommand('agentread.revealRead', api.reads.all[0]);
    await vscode.commands.executeCommand('agentread.reads.focus');
    await vscode.commands.executeCommand('agentread.showAsAgentSees', vscode.Uri.file(inWorkspace('analysis.ipynb')));
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.ok(api.reads.all.length > 3);
    // The driver takes its screenshot now, while the extension still runs (its status bar item and
    // Agent reads view go away when the extension host stops at the end of the suite).
    const signal = path.join(workspace(), '..', 'screenshot');
    fs.writeFileSync(`${signal}.ready`, '');
    await waitFor('the screenshot', () => fs.existsSync(`${signal}.taken`), 30_000);
  });
});
