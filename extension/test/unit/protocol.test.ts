// The request sent for a tool input, and the words shown while it runs.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { failureText, formatSize, imageCaptions, toParts } from '../../src/convert';
import {
  describeResult,
  fromEnd,
  invocationMessage,
  manyInvocationMessage,
  toReadManyParams,
  toReadParams,
  type ReadInput,
  type ReadResult,
} from '../../src/protocol';

describe('toReadParams', () => {
  it('forwards the contract fields and adds consent only when given', () => {
    assert.deepEqual(toReadParams({ path: 'a.py', offset: 3, limit: 10 }, false), { path: 'a.py', offset: 3, limit: 10 });
    assert.deepEqual(toReadParams({ path: 'n.ipynb', cells: '2-4' }, true), { path: 'n.ipynb', cells: '2-4', consent: true });
  });

  it('forwards raw only when set', () => {
    assert.deepEqual(toReadParams({ path: 'n.ipynb', raw: true }, false), { path: 'n.ipynb', raw: true });
    assert.deepEqual(toReadParams({ path: 'n.ipynb', raw: false }, false), { path: 'n.ipynb' });
  });

  it('forwards view, and names it while the read runs', () => {
    assert.deepEqual(toReadParams({ path: 'a.pdf', pages: '3', view: 'image' }, false), { path: 'a.pdf', pages: '3', view: 'image' });
    assert.equal(invocationMessage({ path: 'a.pdf', pages: '3', view: 'image' }), 'Reading a.pdf, page 3, as pictures');
    assert.equal(invocationMessage({ path: 'scan.pdf', view: 'text' }), 'Reading scan.pdf, text only');
  });

  it('forwards an Excel range, and names it while the read runs', () => {
    assert.deepEqual(toReadParams({ path: 'b.xlsx', range: 'Data!B2:F40', limit: 5 }, false),
      { path: 'b.xlsx', range: 'Data!B2:F40', limit: 5 });
    assert.equal(invocationMessage({ path: 'b.xlsx', range: 'Data!B2:F40' }), 'Reading b.xlsx, range Data!B2:F40');
  });

  it('drops what the model may not set and empty values', () => {
    const input = { path: 'x', consent: true, pages: '', note: 'hi', offset: null } as unknown as { path: string };
    assert.deepEqual(toReadParams(input, false), { path: 'x' });
  });
});

describe('toReadManyParams', () => {
  it('forwards paths and globs as they are, objects cut to the read fields, and the approved paths', () => {
    const input = { paths: ['a.py', 'src/**/*.ts', { path: 'big.log', offset: -200, consent: true, x: 1 } as ReadInput] };
    assert.deepEqual(toReadManyParams(input, []), { paths: ['a.py', 'src/**/*.ts', { path: 'big.log', offset: -200 }] });
    assert.deepEqual(toReadManyParams({ paths: ['../o.txt', 'a.py'] }, ['../o.txt']), {
      paths: ['../o.txt', 'a.py'],
      consent: ['../o.txt'],
    });
  });

  it('forwards an outline of every file listed, and an entry\'s own outline and char', () => {
    const input = { paths: ['src/*.py', { path: 'b.xlsx', pages: '1', offset: 2, column: 3, char: 801 }], outline: true };
    assert.deepEqual(toReadManyParams(input, []), {
      paths: ['src/*.py', { path: 'b.xlsx', pages: '1', offset: 2, column: 3, char: 801 }],
      outline: true,
    });
  });

  it('leaves what is not a list for the server to refuse', () => {
    assert.deepEqual(toReadManyParams({ paths: 'a.py' } as unknown as { paths: string[] }, []), { paths: 'a.py' });
  });

  it('names a few of the paths while it runs', () => {
    assert.equal(manyInvocationMessage({ paths: ['a.py', { path: 'b.log', offset: 3 }] }), 'Reading 2 paths: a.py, b.log');
    assert.equal(manyInvocationMessage({ paths: ['1', '2', '3', '4', '5'] }), 'Reading 5 paths: 1, 2, 3, and 2 more');
  });
});

describe('imageCaptions', () => {
  it('takes the bracketed line just before each image, else none', () => {
    const image = { type: 'image' as const, mimeType: 'image/png', data: '', width: 2, height: 3 };
    const content = [
      { type: 'text' as const, text: '--- Page 3 ---\nwords\n[Page 3 as a picture, 2x3:]' },
      image,
      image,
      { type: 'text' as const, text: 'no note here' },
      image,
    ];
    assert.deepEqual(imageCaptions({ content }), ['Page 3 as a picture, 2x3', undefined, undefined]);
  });
});

describe('invocationMessage', () => {
  it('names the file and the part read', () => {
    assert.equal(invocationMessage({ path: '/w/notebook.ipynb', cells: '3-7' }), 'Reading notebook.ipynb, cells 3–7');
    assert.equal(invocationMessage({ path: 'docs/spec.pdf', pages: '2' }), 'Reading spec.pdf, page 2');
    assert.equal(invocationMessage({ path: 'src/main.py', offset: 10, limit: 50 }), 'Reading main.py, lines 10–59');
    assert.equal(invocationMessage({ path: 'src/main.py', offset: 200 }), 'Reading main.py, from line 200');
    assert.equal(invocationMessage({ path: 'C:\\w\\README.md' }), 'Reading README.md');
    assert.equal(invocationMessage({ path: 'src/' }), 'Reading src');
    assert.equal(invocationMessage({ path: 'big.ipynb', cells: 'outline' }), 'Reading big.ipynb, outline');
    assert.equal(invocationMessage({ path: 'big.ipynb', raw: true }), 'Reading big.ipynb, as text');
  });

  it('speaks of sheets, rows and slides for Office files', () => {
    assert.equal(invocationMessage({ path: 'data/report.xlsx', pages: '2' }), 'Reading report.xlsx, sheet 2');
    assert.equal(invocationMessage({ path: 'report.XLSX', pages: '1-3' }), 'Reading report.XLSX, sheets 1–3');
    assert.equal(invocationMessage({ path: 'report.xlsx', pages: 'Q3 totals' }), 'Reading report.xlsx, sheet "Q3 totals"');
    assert.equal(
      invocationMessage({ path: 'report.xlsx', pages: '2', offset: 2001, limit: 500 }),
      'Reading report.xlsx, sheet 2, rows 2001–2500',
    );
    assert.equal(invocationMessage({ path: 'deck.pptx', pages: '3-5' }), 'Reading deck.pptx, slides 3–5');
    assert.equal(invocationMessage({ path: 'deck.pptx', pages: '4' }), 'Reading deck.pptx, slide 4');
    assert.equal(invocationMessage({ path: 'memo.docx', offset: 40, limit: 20 }), 'Reading memo.docx, lines 40–59');
    assert.equal(invocationMessage({ path: 'memo.docx' }), 'Reading memo.docx');
  });

  it('names reads counted from the end of a file', () => {
    assert.equal(invocationMessage({ path: 'app.log', offset: -200 }), 'Reading app.log, last 200 lines');
    assert.equal(invocationMessage({ path: 'app.log', offset: -200, limit: 500 }), 'Reading app.log, last 200 lines');
    assert.equal(invocationMessage({ path: 'app.log', offset: -400, limit: 200 }),
      'Reading app.log, lines -400 to -201 from the end');
  });
});

describe('describeResult', () => {
  const base: ReadResult = { kind: 'text', path: 'a', content: [], truncated: false, isError: false };
  it('counts the hits of a find, and says what it searches for while it runs', () => {
    const hit = { line: 3, column: 1, read: { offset: 3, limit: 1 } };
    assert.equal(describeResult({ ...base, shown: { hits: [hit, hit] } }, { path: 'a', find: 'x' }), '2 hits of "x"');
    assert.equal(describeResult({ ...base, kind: 'pdf', shown: { hits: [] } }, { path: 'a.pdf', find: 'x' }), 'no hit of "x"');
    assert.equal(invocationMessage({ path: 'docs/m.pdf', find: 'boot', pages: '2-9' }), 'Searching m.pdf for "boot", pages 2–9');
  });

  it('summarises what came back', () => {
    assert.equal(describeResult({ ...base, startLine: 1, endLine: 20, totalLines: 90 }, { path: 'a' }), 'lines 1–20 of 90');
    assert.equal(describeResult({ ...base, kind: 'pdf', totalPages: 9 }, { path: 'a', pages: '2-3' }), 'pages 2–3 of 9');
    assert.equal(describeResult({ ...base, kind: 'notebook', totalCells: 4 }, { path: 'a' }), '4 cells');
    const error = { ...base, kind: 'error' as const, isError: true, error: { code: 'not_found', message: 'm' } };
    assert.equal(describeResult(error, { path: 'a' }), 'not_found');
  });

  it('summarises lines numbered from the end of a file too large to count', () => {
    assert.equal(describeResult({ ...base, startLine: -2000, endLine: -1 }, { path: 'a', offset: -2000 }), 'last 2000 lines');
    assert.equal(describeResult({ ...base, startLine: -2000, endLine: -1001 }, { path: 'a', offset: -2000 }),
      'lines -2000 to -1001 from the end');
  });

  it('turns lines counted from the end into editor lines, a final line break starting none', () => {
    // "a\nb\nc\n": the editor shows 4 lines (the last empty), cat -n counts 3, so -1 is "c", editor line 3.
    assert.equal(fromEnd(-1, 4, true), 3);
    assert.equal(fromEnd(-3, 4, true), 1);
    // "a\nb\nc": 3 lines either way.
    assert.equal(fromEnd(-1, 3, false), 3);
    assert.equal(fromEnd(-2, 3, false), 2);
  });

  it('counts sheets and slides, with the rows or lines of an offset read', () => {
    const sheet = { ...base, kind: 'spreadsheet' as const, totalPages: 3 };
    assert.equal(describeResult(sheet, { path: 'r.xlsx' }), '3 sheets');
    assert.equal(describeResult(sheet, { path: 'r.xlsx', pages: '2' }), 'sheet 2 of 3');
    assert.equal(describeResult(sheet, { path: 'r.xlsx', pages: 'other' }), 'sheet "other" of 3');
    assert.equal(describeResult(sheet, { path: 'r.xlsx', pages: '2', offset: 5, limit: 3 }), 'sheet 2 of 3, rows 5–7');
    // The kind comes from the server, which reads content: a workbook named .bin is still counted in sheets.
    assert.equal(describeResult(sheet, { path: 'r.bin', pages: '1-2', offset: 9 }), 'sheets 1–2 of 3, from row 9');
    const deck = { ...base, kind: 'presentation' as const, totalPages: 1, startLine: 1, endLine: 10, totalLines: 10 };
    assert.equal(describeResult(deck, { path: 'd.pptx' }), '1 slide');
    assert.equal(describeResult({ ...deck, totalPages: 12 }, { path: 'd.pptx', pages: '3-5' }), 'slides 3–5 of 12');
    assert.equal(describeResult({ ...deck, totalPages: 12, startLine: 40, endLine: 49, totalLines: 80 }, { path: 'd.pptx', pages: '3-5', offset: 40 }), 'slides 3–5 of 12, lines 40–49 of 80');
    const doc = { ...base, kind: 'document' as const, startLine: 1, endLine: 10, totalLines: 10 };
    assert.equal(describeResult(doc, { path: 'm.docx' }), 'lines 1–10 of 10');
  });
});

describe('conversion', () => {
  it('gives an error result without content a text part', () => {
    const result: ReadResult = {
      kind: 'error', path: 'a', content: [], truncated: false, isError: true, error: { code: 'internal', message: 'it broke' },
    };
    assert.deepEqual(toParts(result, { text: (text) => text }), ['Error: it broke']);
  });

  it('explains a failed request to the model', () => {
    assert.match(failureText(new Error('connection closed')), /^Error: the agentread server could not complete the read \(connection closed\)/);
  });

  it('formats sizes', () => {
    assert.equal(formatSize(812), '812 B');
    assert.equal(formatSize(14_540), '14.2 KB');
    assert.equal(formatSize(3_250_000), '3.1 MB');
  });
});

describe('outline', () => {
  it('is forwarded when set, named while the tool runs, and described by the entries shown', () => {
    assert.deepEqual(toReadParams({ path: 'm.pdf', outline: true }, false), { path: 'm.pdf', outline: true });
    assert.deepEqual(toReadParams({ path: 'm.pdf', outline: false }, false), { path: 'm.pdf' });
    assert.equal(invocationMessage({ path: 'docs/m.pdf', outline: true }), 'Reading m.pdf, outline');
    const result = (shown: object | undefined, truncated: boolean): ReadResult =>
      ({ kind: 'pdf', path: '/w/m.pdf', content: [], totalPages: 2415, truncated, shown, isError: false }) as ReadResult;
    assert.equal(describeResult(result({ outline: [1, 780] }, true), { path: 'm.pdf', outline: true }),
      'outline, entries 1–780, more follow');
    assert.equal(describeResult(result(undefined, false), { path: 'm.pdf', outline: true }), 'outline, no entries');
    const notebook = { kind: 'notebook', path: '/w/n.ipynb', content: [], totalCells: 3, truncated: false,
      shown: { cells: [1, 2, 3] }, isError: false } as ReadResult;
    assert.equal(describeResult(notebook, { path: 'n.ipynb', outline: true }), 'outline of 3 cells');
  });
});
