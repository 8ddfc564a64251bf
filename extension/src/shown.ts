// What a read showed, as the server says in its result's `shown` field (docs/CONTRACT.md, "shown"): the cells
// of a whole-notebook read cut by the budget, of a list or of a cell id, the pages of a PDF read, the lines of
// a window. The "Agent reads" view selects exactly these. A result without the field (an older server) shows
// nothing: the text is never parsed for it, since a cell's source may quote a header line. No `vscode` import.

import type { ReadResult } from './protocol';

/** Positive integers only: anything else in a field is not a number this view can select. */
function numbers(values: unknown): number[] {
  return Array.isArray(values) ? values.filter((value) => Number.isInteger(value) && value >= 1) : [];
}

/** A `[first, last]` range of integers, first not after last, or undefined. */
function range(value: unknown): [number, number] | undefined {
  if (Array.isArray(value) && value.length === 2 && value.every(Number.isInteger) && value[0] <= value[1]) {
    return [value[0], value[1]];
  }
  return undefined;
}

/** The 1-based numbers of the notebook cells a result shows, whole or in part (all listed, for an outline). */
export function shownCells(result: ReadResult): number[] {
  return result.kind === 'notebook' && !result.isError ? numbers(result.shown?.cells) : [];
}

/** The 1-based numbers of the PDF pages (PPTX slides, XLSX sheets) a result shows, whole or in part. */
export function shownPages(result: ReadResult): number[] {
  return result.isError ? [] : numbers(result.shown?.pages);
}

/** The numbered lines a result shows, `[first, last]` (negative: counted from the end of the file). */
export function shownLines(result: ReadResult): [number, number] | undefined {
  return result.isError ? undefined : range(result.shown?.lines);
}

/** The outline entries a result shows, `[first, last]` (`outline: true`). */
export function shownOutline(result: ReadResult): [number, number] | undefined {
  return result.isError ? undefined : range(result.shown?.outline);
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
