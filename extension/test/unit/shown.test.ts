// What a read showed, from the result's `shown` field: the cells and pages the "Agent reads" view selects and
// names. Checked on results of the contract's shape, and on what the real server sends.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { describeResult, forwardRead, type ReadResult, type Shown } from '../../src/protocol';
import { formatNumbers, shownCells, shownLines, shownPages, toSpans } from '../../src/shown';
import { makeFixtures, PDF_PAGES, QUOTED_HEADER, QUOTING_CELLS, TEXT_LINES, type Fixtures } from '../fixtures';
import { startServer, type Server } from './harness';

function result(kind: ReadResult['kind'], text: string, shown?: Shown, totals: Partial<ReadResult> = {}): ReadResult {
  return { kind, path: 'x', content: [{ type: 'text', text }], truncated: false, isError: false, shown, ...totals };
}

describe('shown cells, pages and lines, from the result', () => {
  const quoting = [
    '### Cell 1 [id=a] code (python) exec=1',
    '### Cell 2 [id=b] code (python) exec=2',
    QUOTED_HEADER,
    '--- Page 3 ---',
  ].join('\n');

  it('takes the cells the result names, whatever the text quotes', () => {
    assert.deepEqual(shownCells(result('notebook', quoting, { cells: [1, 2] }, { totalCells: 8 })), [1, 2]);
    assert.deepEqual(shownCells(result('notebook', quoting, { cells: [2, 4, 5, 9] })), [2, 4, 5, 9]);
  });

  it('shows nothing for a result without `shown` (an older server), rather than parse its text', () => {
    assert.deepEqual(shownCells(result('notebook', quoting, undefined, { totalCells: 8 })), []);
    assert.deepEqual(shownPages(result('pdf', quoting, undefined, { totalPages: 4 })), []);
    assert.equal(shownLines(result('text', quoting)), undefined);
    assert.equal(describeResult(result('notebook', quoting, undefined, { totalCells: 8 }), { path: 'a.ipynb', cells: '1-2' }),
      'cells 1–2 of 8');
  });

  it('ignores errors, other kinds for cells, and values that are not what the contract says', () => {
    const error = { ...result('notebook', 'Error: x', { cells: [1] }), isError: true };
    assert.deepEqual(shownCells(error), []);
    assert.deepEqual(shownCells(result('text', '', { cells: [1] })), []);
    const odd = { cells: [0, 2, 2.5, '3', -1] } as unknown as Shown;
    assert.deepEqual(shownCells(result('notebook', '', odd)), [2]);
    assert.equal(shownLines(result('text', '', { lines: [9, 3] })), undefined);
    assert.equal(shownLines(result('text', '', { lines: [3] } as unknown as Shown)), undefined);
  });

  it('takes pages and lines', () => {
    assert.deepEqual(shownPages(result('pdf', quoting, { pages: [2, 3] }, { totalPages: 4 })), [2, 3]);
    assert.deepEqual(shownLines(result('text', '', { lines: [40, 49] })), [40, 49]);
    assert.deepEqual(shownLines(result('text', '', { lines: [-200, -1] })), [-200, -1]);
    // A PDF read by lines names the pages it started and ended in.
    const byLines = result('pdf', '', { pages: [2, 3], lines: [45, 90] }, { totalPages: 4 });
    assert.equal(describeResult(byLines, { path: 'r.pdf', offset: 45 }), 'pages 2–3 of 4');
    assert.equal(describeResult(result('text', '', { lines: [40, 49] }, { totalLines: 120 }), { path: 'a' }), 'lines 40–49 of 120');
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
    assert.deepEqual(shownCells(whole), [1, 2, 3]);
    assert.equal(describeResult(whole, { path: 'analysis.ipynb' }), '3 cells');
  });

  it('names the cells a whole-notebook read cut by the budget showed', async () => {
    const cut = await read({ path: 'big.ipynb' });
    assert.equal(cut.truncated, true);
    const cells = shownCells(cut);
    const next = Number(String((cut.next as { cells: string }).cells).split('-')[0]);
    assert.ok(cells.length > 1 && cells.length < 60, `shown: ${cells.join(',')}`);
    assert.deepEqual(cells, Array.from({ length: next - 1 }, (_, i) => i + 1));
    assert.equal(describeResult(cut, { path: 'big.ipynb' }), `cells 1–${next - 1} of 60`);
  });

  it('names the cells of a list, of a cell id and of an outline', async () => {
    const list = await read({ path: 'big.ipynb', cells: '1,4-6' });
    assert.deepEqual(shownCells(list), [1, 4, 5, 6]);
    assert.deepEqual(toSpans(shownCells(list)), [[0, 1], [3, 6]]);
    assert.equal(describeResult(list, { path: 'big.ipynb', cells: '1,4-6' }), 'cells 1, 4–6 of 60');
    const byId = await read({ path: 'big.ipynb', cells: 'cell-7' });
    assert.deepEqual(shownCells(byId), [7]);
    assert.equal(describeResult(byId, { path: 'big.ipynb', cells: 'cell-7' }), 'cell 7 of 60');
    const outline = await read({ path: 'big.ipynb', cells: 'outline' });
    assert.equal(shownCells(outline).length, 60);
    assert.equal(describeResult(outline, { path: 'big.ipynb', cells: 'outline' }), 'outline of 60 cells');
    const paged = await read({ path: 'big.ipynb', cells: 'outline', offset: 11, limit: 5 });
    assert.equal(describeResult(paged, { path: 'big.ipynb', cells: 'outline', offset: 11, limit: 5 }), 'outline, cells 11–15 of 60');
  });

  it('names the cell an offset read continues', async () => {
    const inside = await read({ path: 'big.ipynb', cells: '3-4', offset: 5, limit: 3 });
    assert.deepEqual(shownCells(inside), [3]);
  });

  it('names only the real cells of a notebook whose cell quotes a header', async () => {
    const some = await read({ path: 'quoting.ipynb', cells: '1-3' });
    assert.ok(some.content.some((part) => part.type === 'text' && part.text.includes(QUOTED_HEADER)));
    assert.deepEqual(shownCells(some), [1, 2, 3]);
    assert.equal(describeResult(some, { path: 'quoting.ipynb', cells: '1-3' }), `cells 1–3 of ${QUOTING_CELLS}`);
    const whole = await read({ path: 'quoting.ipynb' });
    assert.deepEqual(shownCells(whole), Array.from({ length: QUOTING_CELLS }, (_, i) => i + 1));
  });

  it('names the lines of a text window, and of the end of a file', async () => {
    const window = await read({ path: 'lines.txt', offset: 40, limit: 10 });
    assert.deepEqual(shownLines(window), [40, 49]);
    const end = await read({ path: 'lines.txt', offset: -5 });
    assert.deepEqual(shownLines(end), [TEXT_LINES - 4, TEXT_LINES]);
  });

  it('names the pages of a PDF read', async () => {
    const pages = await read({ path: 'report.pdf', pages: '2-3' });
    assert.deepEqual(shownPages(pages), [2, 3]);
    const byLines = await read({ path: 'report.pdf', pages: '2-3', offset: 2, limit: 3 });
    assert.ok(shownPages(byLines).length > 0, JSON.stringify(byLines.shown));
    const whole = await read({ path: 'report.pdf' });
    assert.deepEqual(shownPages(whole), Array.from({ length: PDF_PAGES }, (_, i) => i + 1));
    assert.equal(describeResult(whole, { path: 'report.pdf' }), `${PDF_PAGES} pages`);
    assert.equal(describeResult(pages, { path: 'report.pdf', pages: '2-3' }), `pages 2–3 of ${PDF_PAGES}`);
  });
});
