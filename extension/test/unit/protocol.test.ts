// The request sent for a tool input, and the words shown while it runs.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { failureText, formatSize, toParts } from '../../src/convert';
import { cellSpan, describeResult, invocationMessage, toReadParams, type ReadResult } from '../../src/protocol';

describe('toReadParams', () => {
  it('forwards the contract fields and adds consent only when given', () => {
    assert.deepEqual(toReadParams({ path: 'a.py', offset: 3, limit: 10 }, false), { path: 'a.py', offset: 3, limit: 10 });
    assert.deepEqual(toReadParams({ path: 'n.ipynb', cells: '2-4' }, true), { path: 'n.ipynb', cells: '2-4', consent: true });
  });

  it('forwards raw only when set', () => {
    assert.deepEqual(toReadParams({ path: 'n.ipynb', raw: true }, false), { path: 'n.ipynb', raw: true });
    assert.deepEqual(toReadParams({ path: 'n.ipynb', raw: false }, false), { path: 'n.ipynb' });
  });

  it('drops what the model may not set and empty values', () => {
    const input = { path: 'x', consent: true, pages: '', note: 'hi', offset: null } as unknown as { path: string };
    assert.deepEqual(toReadParams(input, false), { path: 'x' });
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
});

describe('describeResult', () => {
  const base: ReadResult = { kind: 'text', path: 'a', content: [], truncated: false, isError: false };
  it('summarises what came back', () => {
    assert.equal(describeResult({ ...base, startLine: 1, endLine: 20, totalLines: 90 }, { path: 'a' }), 'lines 1–20 of 90');
    assert.equal(describeResult({ ...base, kind: 'pdf', totalPages: 9 }, { path: 'a', pages: '2-3' }), 'pages 2–3 of 9');
    assert.equal(describeResult({ ...base, kind: 'notebook', totalCells: 4 }, { path: 'a' }), '4 cells');
    const error = { ...base, kind: 'error' as const, isError: true, error: { code: 'not_found', message: 'm' } };
    assert.equal(describeResult(error, { path: 'a' }), 'not_found');
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

describe('cellSpan', () => {
  it('turns 1-based cell ranges into notebook ranges', () => {
    assert.deepEqual(cellSpan('3', 10), [2, 3]);
    assert.deepEqual(cellSpan('2-7', 10), [1, 7]);
    assert.deepEqual(cellSpan('5-', 10), [4, 10]);
    assert.deepEqual(cellSpan('8-20', 10), [7, 10]);
    assert.equal(cellSpan('outline', 10), undefined);
    assert.equal(cellSpan('1,4-6', 10), undefined);
    assert.equal(cellSpan('12', 10), undefined);
  });
});
