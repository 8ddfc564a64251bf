// What a read actually showed, taken from the text the model received rather than from what it asked for:
// a whole-notebook read cut by the budget, a list of cells, a cell id or an outline all name their cells in
// the text, and a PDF read its pages. The "Agent reads" view selects exactly these. No `vscode` import.

import type { ReadResult } from './protocol';

/**
 * Lines that name a notebook cell shown (python/agentread/notebook/__init__.py documents the format):
 * the header before each cell, `### Cell 3 [id=ab12cd34] code (python) exec=7`, and the marker of a read
 * that starts inside a cell, `[… continuing cell 3]`.
 */
const CELL_HEADER = /^### Cell (\d+) \[id=[^\]\n]*\] \S/;
const CELL_CONTINUED = /^\[… continuing cell (\d+)\]$/;
/** An outline's line per cell: `Cell 3 [id=ab12cd34] code (python) exec=7, 12 lines: …`. */
const OUTLINE_LINE = /^Cell (\d+) \[id=[^\]\n]*\] \S/;
/** The line before each PDF page, `--- Page 2 ---` (numbered like the text around it in an offset read). */
const PAGE_HEADER = /^(?: *\d+\t)?--- Page (\d+) ---$/;

/** The text parts of a result, line by line. */
function lines(result: ReadResult): string[] {
  return (result.content ?? [])
    .filter((part) => part.type === 'text')
    .flatMap((part) => (part as { text: string }).text.split(/\r?\n/));
}

/**
 * The numbers `pattern` captures, in the order they appear. The server sends cells and pages in order and
 * once each, so a number not above the last one is not a header (a cell's source may quote a header line).
 */
function numbered(text: readonly string[], patterns: readonly RegExp[], total: number | undefined): number[] {
  const found: number[] = [];
  for (const line of text) {
    for (const pattern of patterns) {
      const match = pattern.exec(line);
      if (match) {
        const value = Number(match[1]);
        if (value >= 1 && (total === undefined || value <= total) && value > (found.at(-1) ?? 0)) {
          found.push(value);
        }
        break;
      }
    }
  }
  return found;
}

/** The 1-based numbers of the notebook cells a result shows (all listed cells, for an outline). */
export function shownCells(result: ReadResult, outline: boolean): number[] {
  if (result.kind !== 'notebook' || result.isError) {
    return [];
  }
  return numbered(lines(result), outline ? [OUTLINE_LINE] : [CELL_HEADER, CELL_CONTINUED], result.totalCells);
}

/** The 1-based numbers of the PDF pages a result shows. */
export function shownPages(result: ReadResult): number[] {
  if (result.kind !== 'pdf' || result.isError) {
    return [];
  }
  return numbered(lines(result), [PAGE_HEADER], result.totalPages);
}

/** 1-based numbers as 0-based [start, end) spans, runs of consecutive numbers merged: [1,4,5,6] → [[0,1],[3,6]]. */
export function toSpans(numbers: readonly number[]): Array<[number, number]> {
  const sorted = [...new Set(numbers)].filter((value) => Number.isInteger(value) && value >= 1).sort((a, b) => a - b);
  const spans: Array<[number, number]> = [];
  for (const value of sorted) {
    const last = spans.at(-1);
    if (last && last[1] === value - 1) {
      last[1] = value;
    } else {
      spans.push([value - 1, value]);
    }
  }
  return spans;
}

/** Numbers for people: [1,4,5,6] → "1, 4–6". */
export function formatNumbers(numbers: readonly number[]): string {
  return toSpans(numbers)
    .map(([start, end]) => (end - start === 1 ? `${end}` : `${start + 1}–${end}`))
    .join(', ');
}
