// Forwarding and result conversion against the real Python server (no `vscode` module involved).

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { CancellationTokenSource } from 'vscode-jsonrpc/node';
import { checkConsent } from '../../src/consent';
import { agentText, failureText, images, toParts, type PartFactory } from '../../src/convert';
import { notebookOutputsParams, OUTPUTS_METHOD } from '../../src/outputs';
import { forwardRead, type ReadResult } from '../../src/protocol';
import { makeFixtures, PDF_PAGES, TEXT_LINES, textLine, type Fixtures } from '../fixtures';
import { EXTENSION_ROOT, startServer, type Server } from './harness';

/** The `agentread.sensitiveFiles` default from package.json: what the extension sends the server. */
const SENSITIVE_DEFAULT: string[] = JSON.parse(fs.readFileSync(path.join(EXTENSION_ROOT, 'package.json'), 'utf8'))
  .contributes.configuration.properties['agentread.sensitiveFiles'].default;

type Part = { text: string } | { image: Uint8Array; mimeType: string };

const withImages: PartFactory<Part> = {
  text: (text) => ({ text }),
  image: (image, mimeType) => ({ image, mimeType }),
};
const withoutImages: PartFactory<Part> = { text: (text) => ({ text }) };

function joinedText(parts: Part[]): string {
  return parts.map((part) => ('text' in part ? part.text : '')).join('\n');
}

describe('forwarding to the real server', () => {
  let fixtures: Fixtures;
  let server: Server;

  before(async () => {
    fixtures = makeFixtures();
    server = await startServer(fixtures.workspace, SENSITIVE_DEFAULT);
  });

  after(async () => {
    await server?.stop();
    fs.rmSync(path.dirname(fixtures.workspace), { recursive: true, force: true });
  });

  it('reads a window of a text file with editor line numbers', async () => {
    const result = await forwardRead(server.send, { path: 'lines.txt', offset: 11, limit: 5 }, false);
    assert.equal(result.isError, false);
    assert.equal(result.kind, 'text');
    assert.equal(result.startLine, 11);
    assert.equal(result.endLine, 15);
    assert.equal(result.totalLines, TEXT_LINES);
    const parts = toParts(result, withImages);
    const text = joinedText(parts);
    assert.match(text, new RegExp(`^    11\\t${textLine(11)}$`, 'm'));
    assert.match(text, new RegExp(`^    15\\t${textLine(15)}$`, 'm'));
    assert.doesNotMatch(text, /^    16\t/m);
    assert.doesNotMatch(text, /^    10\t/m);
  });

  it('says how to continue a truncated read', async () => {
    const result = await forwardRead(server.send, { path: fixtures.text, limit: 50 }, false);
    assert.equal(result.truncated, true);
    assert.deepEqual(result.next, { offset: 51 });
    assert.match(agentText(result), /offset=51/);
  });

  it('returns the image output of a notebook as an image part', async () => {
    const result = await forwardRead(server.send, { path: fixtures.notebook }, false);
    assert.equal(result.isError, false, agentText(result));
    assert.equal(result.kind, 'notebook');
    assert.equal(result.totalCells, 3);
    const parts = toParts(result, withImages);
    const imageParts = parts.filter((part): part is { image: Uint8Array; mimeType: string } => 'image' in part);
    assert.equal(imageParts.length, 1);
    assert.match(imageParts[0].mimeType, /^image\/(png|jpeg)$/);
    const magic = Buffer.from(imageParts[0].image.subarray(0, 4)).toString('hex');
    assert.ok(magic === '89504e47' || magic.startsWith('ffd8ff'), `image bytes start ${magic}`);
    assert.match(joinedText(parts), /print\(total\)/);
    assert.match(joinedText(parts), /45/);
  });

  it('reads notebook cells by 1-based index', async () => {
    const result = await forwardRead(server.send, { path: fixtures.notebook, cells: '2' }, false);
    const text = agentText(result);
    assert.match(text, /print\(total\)/);
    assert.doesNotMatch(text, /A small analysis/);
    assert.equal(images(result).length, 0);
  });

  it('reads a notebook outline, and the notebook file as text with raw', async () => {
    const outline = agentText(await forwardRead(server.send, { path: fixtures.notebook, cells: 'outline' }, false));
    assert.match(outline, /Cell 3 \[id=plot\]/);
    const raw = await forwardRead(server.send, { path: fixtures.notebook, raw: true }, false);
    assert.equal(raw.kind, 'text');
    assert.match(agentText(raw), /^\s+\d+\t.*"nbformat": 4/m);
  });

  it('turns images into a text note when the editor cannot pass images', async () => {
    const result = await forwardRead(server.send, { path: fixtures.notebook, cells: '3' }, false);
    const parts = toParts(result, withoutImages);
    assert.ok(parts.every((part) => 'text' in part));
    assert.match(joinedText(parts), /\[image: image\/\w+ \d+x\d+, not attached: this version of VS Code/);
  });

  it('reads a PDF page range with page markers', async () => {
    const result = await forwardRead(server.send, { path: fixtures.pdf, pages: '2-3' }, false);
    assert.equal(result.isError, false, agentText(result));
    assert.equal(result.kind, 'pdf');
    assert.equal(result.totalPages, PDF_PAGES);
    const text = agentText(result);
    assert.match(text, /--- Page 2 ---/);
    assert.match(text, /This is page 3 of the test report/);
    assert.doesNotMatch(text, /--- Page 1 ---/);
    assert.doesNotMatch(text, /--- Page 4 ---/);
  });

  it('refuses a path outside the workspace without consent, and reads it with consent', async () => {
    const refused = await forwardRead(server.send, { path: fixtures.outside }, false);
    assert.equal(refused.isError, true);
    assert.equal(refused.kind, 'error');
    assert.equal(refused.error?.code, 'outside_workspace');
    const parts = toParts(refused, withImages);
    assert.equal(parts.length, 1);
    assert.match(joinedText(parts), /^Error: /);

    const allowed = await forwardRead(server.send, { path: fixtures.outside }, true);
    assert.equal(allowed.isError, false);
    assert.match(agentText(allowed), /a note kept outside the workspace/);
  });

  it('refuses a sensitive file without consent', async () => {
    const refused = await forwardRead(server.send, { path: '.env' }, false);
    assert.equal(refused.error?.code, 'sensitive_file');
    const allowed = await forwardRead(server.send, { path: '.env' }, true);
    assert.match(agentText(allowed), /API_TOKEN/);
  });

  it('asks for consent exactly when the server would refuse', async () => {
    fs.mkdirSync(path.join(fixtures.workspace, 'keys'), { recursive: true });
    fs.writeFileSync(path.join(fixtures.workspace, 'keys', 'server.pem'), '-----BEGIN NOTHING-----\n');
    fs.writeFileSync(path.join(fixtures.workspace, 'environment.md'), 'not a secret\n');
    const cases = [
      fixtures.text,
      'lines.txt',
      fixtures.notebook,
      fixtures.env,
      'keys/server.pem',
      'environment.md',
      fixtures.outside,
      fixtures.escapingLink,
      path.join(fixtures.workspace, '..', 'outside', 'notes.txt'),
      pathToFileURL(fixtures.text).href,
      'keys',
    ];
    for (const requested of cases) {
      const result = await forwardRead(server.send, { path: requested }, false);
      const refused = result.error?.code === 'outside_workspace' || result.error?.code === 'sensitive_file';
      const asks = (await checkConsent(server.send, [requested])).length > 0;
      assert.equal(asks, refused, `${requested}: extension asks ${asks}, server refuses ${refused}`);
    }
  });

  it('answers a malformed request with -32602, which becomes text for the model', async () => {
    await assert.rejects(
      forwardRead(server.send, { path: fixtures.text, offset: 0 }, false),
      (error: { code?: number }) => {
        assert.equal(error.code, -32602);
        assert.match(failureText(error), /^Error: invalid arguments: .*offset/);
        return true;
      },
    );
  });

  it('does not forward fields outside the contract', async () => {
    const input = { path: fixtures.outside, consent: true, extra: 1 } as unknown as { path: string };
    const result = await forwardRead(server.send, input, false);
    assert.equal(result.error?.code, 'outside_workspace');
  });

  it('returns the live buffer of an open document', async () => {
    const uri = pathToFileURL(fixtures.text).href;
    await server.connection.sendNotification('textDocument/didOpen', {
      textDocument: { uri, languageId: 'plaintext', version: 1, text: 'unsaved first line\nsecond\n' },
    });
    const live = await forwardRead(server.send, { path: fixtures.text }, false);
    assert.match(agentText(live), /^     1\tunsaved first line$/m);
    assert.equal(live.totalLines, 2);
    await server.connection.sendNotification('textDocument/didClose', { textDocument: { uri } });
    const saved = await forwardRead(server.send, { path: fixtures.text, limit: 1 }, false);
    assert.match(agentText(saved), new RegExp(`^     1\\t${textLine(1)}$`, 'm'));
  });

  it('reads an open notebook with the cell text and outputs the editor holds', async () => {
    const uri = pathToFileURL(fixtures.notebook).href;
    const cellUri = (index: number) => `vscode-notebook-cell:${fixtures.notebook}#W${index}sZmlsZQ`;
    const sources = ['# Edited title', 'print(6 * 7)'];
    await server.connection.sendNotification('notebookDocument/didOpen', {
      notebookDocument: {
        uri,
        notebookType: 'jupyter-notebook',
        version: 1,
        cells: [
          { kind: 1, document: cellUri(0), metadata: { id: 'intro' } },
          { kind: 2, document: cellUri(1), metadata: { id: 'numbers' } },
        ],
      },
      cellTextDocuments: sources.map((text, index) => ({
        uri: cellUri(index),
        languageId: index ? 'python' : 'markdown',
        version: 1,
        text,
      })),
    });
    const encoder = new TextEncoder();
    await server.connection.sendNotification(
      OUTPUTS_METHOD,
      notebookOutputsParams(uri, [
        { isCode: false, outputs: [] },
        {
          isCode: true,
          executionCount: 5,
          outputs: [{ items: [{ mime: 'application/vnd.code.notebook.stdout', data: encoder.encode('42\n') }] }],
        },
      ]),
    );
    try {
      const text = agentText(await forwardRead(server.send, { path: fixtures.notebook }, false));
      assert.match(text, /# Edited title/);
      assert.match(text, /print\(6 \* 7\)/);
      assert.match(text, /exec=5/);
      assert.match(text, /^42$/m);
      assert.doesNotMatch(text, /^45$/m);
    } finally {
      await server.connection.sendNotification('notebookDocument/didClose', {
        notebookDocument: { uri },
        cellTextDocuments: sources.map((_, index) => ({ uri: cellUri(index) })),
      });
    }
  });

  it('passes the cancellation token through', async () => {
    const source = new CancellationTokenSource();
    const pending = forwardRead(server.send, { path: fixtures.pdf }, false, source.token);
    source.cancel();
    // Either the read was already done, or the server answered the cancellation; it never hangs. Only a server that
    // hangs takes this long to answer, so the check does not depend on how fast the machine is.
    const hangsAfterMs = 60_000;
    let hang: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      pending.then(
        (result: ReadResult) => `done:${result.kind}`,
        (error: { code?: number }) => `rejected:${error.code}`,
      ),
      new Promise<string>((resolve) => (hang = setTimeout(() => resolve('timeout'), hangsAfterMs))),
    ]);
    clearTimeout(hang);
    assert.match(outcome, /^(done:pdf|rejected:-32800)$/);
    // And the server still answers.
    const after = await forwardRead(server.send, { path: fixtures.text, limit: 1 }, false);
    assert.equal(after.isError, false);
  });
});
