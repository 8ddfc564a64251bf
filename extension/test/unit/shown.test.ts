// What a read showed, from the text the model received: the cells and pages the "Agent reads" view selects
// and names. Checked on made-up text and on what the real server sends.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { describeResult, forwardRead, type ReadResult } from '../../src/protocol';
import { formatNumbers, shownCells, shownPages, toSpans } from '../../src/shown';
import { makeFixtures, PDF_PAGES, type Fixtures } from '../fixtures';
import { startServer, type Server } from './harness';

function result(kind: ReadResult['kind'], text: string, totals: Partial<ReadResult> = {}): ReadResult {
  return { kind, path: 'x', content: [{ type: 'text', text }], truncated: false, isError: false, ...totals };
}

describe('shown cells and pages, from the text', () => {
  it('takes the cell headers and the marker of a read that starts inside a cell', () => {
    const text = [
      'Notebook: 9 cells (5 code, 4 markdown), language python, nbformat 4.5.',
      '[… continuing cell 2]',
      'x = 1',
      '### Cell 4 [id=ab12cd34] code (python) exec=7',
      'print(x)',
      '--- output 1: stdout ---',
      '### Cell 5 [id=~3f9818fe] markdown',
      // A markdown cell quoting a header: not a cell of its own (cells come in order, once each).
      '### Cell 1 [id=intro] markdown',
      '### Cell 9 [id=last] raw (text/html)',
    ].join('\n');
    assert.deepEqual(shownCells(result('notebook', text, { totalCells: 9 }), false), [2, 4, 5, 9]);
  });

  it('takes the outline lines of an outline read, and only then', () => {
    const text = [
      'Notebook: 3 cells (2 code, 1 markdown), language python, nbformat 4.5.',
      'Cell 1 [id=intro] markdown, 2 lines: # A small analysis',
      'Cell 2 [id=numbers] code (python) exec=1, 2 lines: total = sum(range(10)) | stdout 1 line',
      '[Shown: outline lines 1-2 of 3. Continue with offset=3, cells="outline".]',
    ].join('\n');
    assert.deepEqual(shownCells(result('notebook', text, { totalCells: 3 }), true), [1, 2]);
    assert.deepEqual(shownCells(result('notebook', text, { totalCells: 3 }), false), []);
  });

  it('ignores numbers past the total, other kinds and errors', () => {
    const header = '### Cell 12 [id=a] code (python) exec=1';
    assert.deepEqual(shownCells(result('notebook', header, { totalCells: 11 }), false), []);
    assert.deepEqual(shownCells(result('text', header), false), []);
    assert.deepEqual(shownCells({ ...result('notebook', header), isError: true }, false), []);
  });

  it('takes PDF page lines, numbered or not', () => {
    const plain = '--- Page 2 ---\nsome text\n--- Page 3 ---\nmore';
    assert.deepEqual(shownPages(result('pdf', plain, { totalPages: 4 })), [2, 3]);
    const numbered = '    36\t\n    37\t--- Page 3 ---\n    38\tiii';
    assert.deepEqual(shownPages(result('pdf', numbered, { totalPages: 4 })), [3]);
    assert.deepEqual(shownPages(result('text', plain)), []);
  });

  it('merges runs of numbers into spans and words', () => {
    assert.deepEqual(toSpans([1, 4, 5, 6]), [[0, 1], [3, 6]]);
    assert.deepEqual(toSpans([6, 5, 5, 1]), [[0, 1], [4, 6]]);
    assert.deepEqual(toSpans([]), []);
    assert.equal(formatNumbers([1, 4, 5, 6]), '1, 4–6');
    assert.equal(formatNumbers([3]), '3');
  });
});

/** A notebook of `count` code cells, each with a source of about `size` characters and one stdout output. */
function bigNotebook(count: number, size: number): string {
  const cells = Array.from({ length: count }, (_, i) => ({
    cell_type: 'code',
    id: `cell-${i + 1}`,
    execution_count: i + 1,
    metadata: {},
    source: Array.from({ length: Math.ceil(size / 40) }, (_, line) => `value_${i + 1}_${line} = ${line} * 1234567\n`),
    outputs: [{ output_type: 'stream', name: 'stdout', text: [`${i + 1}\n`] }],
  }));
  const notebook = { cells, metadata: { language_info: { name: 'python' } }, nbformat: 4, nbformat_minor: 5 };
  return JSON.stringify(notebook);
}

describe('shown cells and pages, in what the real server sends', () => {
  let fixtures: Fixtures;
  let server: Server;
  const read = (input: { path: string; cells?: string; offset?: number; limit?: number; pages?: string }) =>
    forwardRead(server.send, input, false);

  before(async () => {
    fixtures = makeFixtures();
    fs.writeFileSync(path.join(fixtures.workspace, 'big.ipynb'), bigNotebook(60, 1500));
    server = await startServer(fixtures.workspace);
  });

  after(async () => {
    await server?.stop();
    fs.rmSync(path.dirname(fixtures.workspace), { recursive: true, force: true });
  });

  it('names every cell of a whole notebook that fits', async () => {
    const whole = await read({ path: 'analysis.ipynb' });
    assert.deepEqual(shownCells(whole, false), [1, 2, 3]);
    assert.equal(describeResult(whole, { path: 'analysis.ipynb' }), '3 cells');
  });

  it('names the cells a whole-notebook read cut by the budget showed', async () => {
    const cut = await read({ path: 'big.ipynb' });
    assert.equal(cut.truncated, true);
    const cells = shownCells(cut, false);
    const next = Number(String((cut.next as { cells: string }).cells).split('-')[0]);
    assert.ok(cells.length > 1 && cells.length < 60, `shown: ${cells.join(',')}`);
    assert.deepEqual(cells, Array.from({ length: next - 1 }, (_, i) => i + 1));
    assert.equal(describeResult(cut, { path: 'big.ipynb' }), `cells 1–${next - 1} of 60`);
  });

  it('names the cells of a list, of a cell id and of an outline', async () => {
    const list = await read({ path: 'big.ipynb', cells: '1,4-6' });
    assert.deepEqual(shownCells(list, false), [1, 4, 5, 6]);
    assert.deepEqual(toSpans(shownCells(list, false)), [[0, 1], [3, 6]]);
    assert.equal(describeResult(list, { path: 'big.ipynb', cells: '1,4-6' }), 'cells 1, 4–6 of 60');
    const byId = await read({ path: 'big.ipynb', cells: 'cell-7' });
    assert.deepEqual(shownCells(byId, false), [7]);
    assert.equal(describeResult(byId, { path: 'big.ipynb', cells: 'cell-7' }), 'cell 7 of 60');
    const outline = await read({ path: 'big.ipynb', cells: 'outline' });
    assert.equal(shownCells(outline, true).length, 60);
    assert.equal(describeResult(outline, { path: 'big.ipynb', cells: 'outline' }), 'outline of 60 cells');
    const paged = await read({ path: 'big.ipynb', cells: 'outline', offset: 11, limit: 5 });
    assert.equal(describeResult(paged, { path: 'big.ipynb', cells: 'outline', offset: 11, limit: 5 }), 'outline, cells 11–15 of 60');
  });

  it('names the cell an offset read continues', async () => {
    const inside = await read({ path: 'big.ipynb', cells: '3-4', offset: 5, limit: 3 });
    assert.deepEqual(shownCells(inside, false), [3]);
  });

  it('names the pages of a PDF read', async () => {
    const pages = await read({ path: 'report.pdf', pages: '2-3' });
    assert.deepEqual(shownPages(pages), [2, 3]);
    const whole = await read({ path: 'report.pdf' });
    assert.deepEqual(shownPages(whole), Array.from({ length: PDF_PAGES }, (_, i) => i + 1));
    assert.equal(describeResult(whole, { path: 'report.pdf' }), `${PDF_PAGES} pages`);
    assert.equal(describeResult(pages, { path: 'report.pdf', pages: '2-3' }), `pages 2–3 of ${PDF_PAGES}`);
  });
});
