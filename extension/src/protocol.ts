// The contract with the Python server (DESIGN.md, "The contract"): the request the tool forwards and the
// result it gets back. No `vscode` import here, so the unit tests can use it against the real server.

import { formatNumbers, shownCells, shownLines, shownOutline, shownPages } from './shown';

/** The JSON-RPC method the server answers. */
export const READ_METHOD = 'agentread/read';

/** What the model sends: the tool's input schema in package.json. */
export interface ReadInput {
  path: string;
  offset?: number;
  limit?: number;
  pages?: string;
  cells?: string;
  /** Read a notebook (or any text-based format) as its plain numbered source. */
  raw?: boolean;
  /** `image`: PDF pages as pictures, each after its text; `text`: no pictures at all. */
  view?: 'text' | 'image';
  /** A `version` an earlier read gave: the server answers unchanged, or what changed since. */
  since?: string;
  /** 1-based character where the first line continues (a line cut at 2000 characters). */
  column?: number;
  /** Search the file for this text: the reply lists hits instead of a window. */
  find?: string;
  regex?: boolean;
  ignoreCase?: boolean;
  /** The document's structure (bookmarks, headings, symbols, slides, sheets) instead of its text. */
  outline?: boolean;
  /** Excel, with `column`: the 1-based character of that cell where a cell longer than one reply reads on. */
  char?: number;
  /** Excel: an A1 range of one sheet (`Data!B2:F40`); a cut reply's `next` goes on within it. */
  range?: string;
}

/** What the server receives: the model's input plus what only the extension sets: the user's consent, and
 * the most text one reply may hold (the host's limit, `replySize.ts`). */
export interface ReadParams extends ReadInput {
  consent?: boolean;
  maxBytes?: number;
}

export interface TextContent {
  type: 'text';
  text: string;
}

export interface ImageContent {
  type: 'image';
  mimeType: string;
  /** base64 */
  data: string;
  width: number;
  height: number;
}

export type Content = TextContent | ImageContent;

/**
 * `document`, `spreadsheet`, `presentation`: a Word (.docx), Excel (.xlsx, .xls) or PowerPoint (.pptx) file;
 * `mail`: an .eml or Outlook .msg message; `rtf`: an RTF document's text.
 */
export type ResultKind =
  | 'text'
  | 'notebook'
  | 'pdf'
  | 'image'
  | 'directory'
  | 'archive'
  | 'document'
  | 'spreadsheet'
  | 'presentation'
  | 'mail'
  | 'rtf'
  | 'error';

/** A range `[first, last]`, 1-based and inclusive. */
export type Span = [number, number];

/**
 * What a reply holds (docs/CONTRACT.md, "shown"), so that a client never parses the text for it. Each field
 * is present only where it applies.
 */
export interface Shown {
  /** The numbered lines shown (text, DOCX, PPTX, notebook or PDF reads by line). */
  lines?: Span;
  /** The PDF pages, PPTX slides or XLSX sheets shown, whole or in part. */
  pages?: number[];
  /** The XLSX rows shown of the last sheet listed. */
  rows?: Span;
  /** The notebook cells shown, whole or in part. */
  cells?: number[];
  /** The lines of a cell a read by lines starts or ends inside. */
  cellLines?: Array<{ cell: number; lines: Span }>;
  /** Outputs cut to their head and tail: the output's own lines shown. */
  outputs?: Array<{ cell: number; output: number; shown: Span[]; totalLines: number }>;
  /** A directory's entries listed, in the sorted listing. */
  entries?: Span;
  /** The outline entries shown (`outline: true`). */
  outline?: Span;
  /** A `find`'s hits listed, in order. */
  hits?: FindHit[];
}

/** One hit of a `find` (docs/CONTRACT.md, "Search"): where it is, and the read arguments that show it. */
export interface FindHit {
  line?: number;
  page?: number;
  slide?: number;
  sheet?: string;
  /** A notebook cell's number, or a spreadsheet cell such as "B17". */
  cell?: number | string;
  id?: string;
  /** In a notebook cell: "source" or "output N". */
  in?: string;
  column: number;
  read: Record<string, unknown>;
}

export interface ReadResult {
  kind: ResultKind;
  path: string;
  content: Content[];
  totalLines?: number;
  startLine?: number;
  endLine?: number;
  totalPages?: number;
  totalCells?: number;
  truncated: boolean;
  next?: Record<string, unknown>;
  shown?: Shown;
  /** A re-read of an unchanged file in a session with the unchanged-read stub on: one line says so. */
  unchanged?: boolean;
  /** The file's version (a short content hash), its size in bytes and modification time (docs/CONTRACT.md). */
  version?: string;
  size?: number;
  mtime?: string;
  /** The file changed since the version `since` named, or since this session last read it; `diff`: the text is a diff. */
  changed?: boolean;
  diff?: boolean;
  /** Passages a person reading the file would not see, marked ⟦…⟧ in the text, counted by kind (docs/CONTRACT.md). */
  hidden?: Record<string, number>;
  encoding?: string;
  isError: boolean;
  error?: { code: string; message: string };
}

/** The JSON-RPC method that reads several files into one reply. */
export const READ_MANY_METHOD = 'agentread/readMany';

/**
 * One entry of `paths`: a path or a glob, or a path with the single read's window arguments; `after`: of a
 * glob's matches, only those sorted after this path (how `next` resumes a glob).
 */
export type ManyEntry = string | (ReadInput & { after?: string });

/** What the model sends to the read-many tool: its input schema in package.json. */
export interface ReadManyInput {
  paths: ManyEntry[];
  find?: string;
  regex?: boolean;
  ignoreCase?: boolean;
  /** Every file listed gives its outline instead of its text. */
  outline?: boolean;
}

/** What the server receives: the model's input, and the entries' paths the user approved, set by the extension only. */
export interface ReadManyParams extends ReadManyInput {
  consent?: string[];
  maxBytes?: number;
}

/** One file of a read-many reply: how it fared (`whole`, `cut`, `error`, `not_shown`) and what it showed. */
export interface ManyFile {
  path: string;
  state: 'whole' | 'cut' | 'error' | 'not_shown';
  kind?: ResultKind;
  truncated?: boolean;
  next?: Record<string, unknown>;
  shown?: Shown;
  hidden?: Record<string, number>;
  error?: { code: string; message: string };
  /** The file's version and what changed, as a single read gives them (ReadResult). */
  version?: string;
  size?: number;
  mtime?: string;
  unchanged?: boolean;
  changed?: boolean;
  diff?: boolean;
}

/** A read-many reply: one `==> path <==` header per file in `content`, `next` the `paths` that continue. */
export interface ReadManyResult {
  kind: 'many';
  content: Content[];
  files?: ManyFile[];
  truncated: boolean;
  /** The arguments that continue: the rest of each file cut, the call's entries resumed, its `find` once. */
  next?: ReadManyInput;
  isError: boolean;
  error?: { code: string; message: string };
}

/** Sends one request; `vscode-languageclient` and `vscode-jsonrpc` connections both fit. */
export type SendRequest = (method: string, params: unknown, token?: unknown) => Promise<unknown>;

const INPUT_FIELDS = ['path', 'offset', 'limit', 'pages', 'cells', 'raw', 'view', 'since', 'column', 'find', 'regex', 'ignoreCase', 'outline', 'char', 'range'] as const;

/** The search, or the outline, a read of many files may ask of every file it lists. */
const MANY_FIND_FIELDS = ['find', 'regex', 'ignoreCase', 'outline'] as const;

/**
 * The params for one read. Only the fields of the contract are forwarded, so nothing the model invents
 * (a `consent` of its own, say) reaches the server; the server validates the values and answers a
 * malformed request with JSON-RPC -32602.
 */
export function toReadParams(input: ReadInput, consent: boolean, maxBytes?: number): ReadParams {
  const params: Record<string, unknown> = {};
  const source = (input ?? {}) as unknown as Record<string, unknown>;
  for (const field of INPUT_FIELDS) {
    const value = source[field];
    if (value !== undefined && value !== null && value !== '' && value !== false) {
      params[field] = value;
    }
  }
  if (consent) {
    params.consent = true;
  }
  if (maxBytes !== undefined) {
    params.maxBytes = maxBytes;
  }
  return params as unknown as ReadParams;
}

/** Forwards one read to the server, with the caller's cancellation token. */
export async function forwardRead(
  send: SendRequest,
  input: ReadInput,
  consent: boolean,
  token?: unknown,
  maxBytes?: number,
): Promise<ReadResult> {
  const result = await send(READ_METHOD, toReadParams(input, consent, maxBytes), token);
  return result as ReadResult;
}

/**
 * The params for one read of many files: each object entry cut to the single read's fields (as
 * toReadParams does), and `consent` listing the paths the user approved. Anything that is not a list goes
 * as it is, for the server to refuse with -32602.
 */
export function toReadManyParams(
  input: ReadManyInput,
  approved: readonly string[],
  maxBytes?: number,
): ReadManyParams {
  const paths = input?.paths;
  const params: ReadManyParams = {
    paths: Array.isArray(paths) ? paths.map(toManyEntry) : paths,
  };
  const source = (input ?? {}) as unknown as Record<string, unknown>;
  for (const field of MANY_FIND_FIELDS) {
    const value = source[field];
    if (value !== undefined && value !== null && value !== '' && value !== false) {
      (params as unknown as Record<string, unknown>)[field] = value;
    }
  }
  if (approved.length > 0) {
    params.consent = [...approved];
  }
  if (maxBytes !== undefined) {
    params.maxBytes = maxBytes;
  }
  return params;
}

/** An object entry of `paths` cut to the single read's fields and `after`, as toReadParams cuts a read. */
function toManyEntry(entry: ManyEntry): ManyEntry {
  if (typeof entry === 'string') {
    return entry;
  }
  const params: ManyEntry = toReadParams(entry, false);
  const after = (entry as { after?: unknown } | null)?.after;
  return after !== undefined && after !== null && after !== '' ? { ...params, after: after as string } : params;
}

/** Forwards one read of many files to the server, with the caller's cancellation token. */
export async function forwardReadMany(
  send: SendRequest,
  input: ReadManyInput,
  approved: readonly string[],
  token?: unknown,
  maxBytes?: number,
): Promise<ReadManyResult> {
  return (await send(READ_MANY_METHOD, toReadManyParams(input, approved, maxBytes), token)) as ReadManyResult;
}

/** The path of an entry of `paths`, whether a string or an object. */
export function entryPath(entry: ManyEntry): string {
  return typeof entry === 'string' ? entry : String(entry?.path ?? '');
}

/** The short message shown while the read-many tool runs: "Reading 3 files: a.py, b.py, docs/*.md". */
export function manyInvocationMessage(input: ReadManyInput): string {
  const paths = Array.isArray(input?.paths) ? input.paths.map(entryPath) : [];
  const shown = paths.slice(0, MESSAGE_PATHS).join(', ');
  const more = paths.length > MESSAGE_PATHS ? `, and ${paths.length - MESSAGE_PATHS} more` : '';
  return `Reading ${paths.length} ${paths.length === 1 ? 'path' : 'paths'}: ${shown}${more}`;
}

/** Paths named in the read-many progress message: enough to recognise the call, short enough for one line. */
const MESSAGE_PATHS = 3;

/** The file name of a path, whatever its separators. */
export function baseName(path: string): string {
  const trimmed = path.replace(/[\\/]+$/, '');
  const cut = Math.max(trimmed.lastIndexOf('/'), trimmed.lastIndexOf('\\'));
  return cut >= 0 ? trimmed.slice(cut + 1) : trimmed;
}

/** "3-7" becomes "3–7" for people; anything else is shown as given. */
function prettyRange(range: string): string {
  return range.trim().replace(/\s*-\s*/g, '–');
}

/** What `pages` addresses in a file: a workbook's sheets, a deck's slides, otherwise (PDF) pages. */
export type PageUnit = 'page' | 'sheet' | 'slide';

/**
 * Guessed from the file name, for words shown before the server has answered. The server tells formats
 * apart by content; a misnamed file only gets the wrong word in a progress message.
 */
export function pageUnitOf(path: string): PageUnit {
  const name = baseName(String(path ?? '')).toLowerCase();
  if (/\.(xlsx|xlsm|xltx|xltm)$/.test(name)) {
    return 'sheet';
  }
  if (/\.(pptx|pptm|ppsx|ppsm|potx|potm)$/.test(name)) {
    return 'slide';
  }
  return 'page';
}

/** "page 2", "pages 3–5", "slides 3–5", "sheet 2", or a sheet by its name: `sheet "Q3 totals"`. */
function describePages(pages: string, unit: PageUnit): string {
  const numeric = /^[\d\s,\-–]+$/.test(pages);
  if (!numeric) {
    return unit === 'sheet' ? `sheet "${pages}"` : `${unit}s ${pages}`;
  }
  return `${/[-–,]/.test(pages) ? `${unit}s` : unit} ${prettyRange(pages)}`;
}

/** "1 slide", "12 slides", "? pages" when the total is unknown. */
function count(total: number | undefined, unit: string): string {
  return `${total ?? '?'} ${unit}${total === 1 ? '' : 's'}`;
}

/** "lines 10–59", "from line 10", "last 200 lines"; rows of a sheet rather than lines in a workbook. */
function describeSpan(offset: number | undefined, limit: number | undefined, unit: 'line' | 'row'): string {
  const first = offset ?? 1;
  if (first < 0) {
    return spanFromEnd(first, limit === undefined ? -1 : Math.min(first + limit - 1, -1), unit);
  }
  return limit !== undefined ? `${unit}s ${first}–${first + limit - 1}` : `from ${unit} ${first}`;
}

/** Lines counted from the end (-1 is the last line): "last 200 lines", "lines -400 to -201 from the end". */
function spanFromEnd(first: number, last: number, unit: 'line' | 'row' = 'line'): string {
  return last === -1 ? `last ${-first} ${unit}s` : `${unit}s ${first} to ${last} from the end`;
}

/**
 * Editor line numbers (1-based) of lines counted from the end of a document: -1 is its last line as `cat -n`
 * counts, so a final line break, after which the editor shows one more empty line, starts no line of its own.
 */
export function fromEnd(line: number, lineCount: number, endsWithLineBreak: boolean): number {
  return (endsWithLineBreak ? lineCount - 1 : lineCount) + 1 + line;
}

/** The part of a read the input asks for, in words: "cells 3–7", "lines 10–59", "page 2", "sheet 2". */
export function describeRange(input: ReadInput): string | undefined {
  const parts: string[] = [];
  const unit = pageUnitOf(input.path);
  if (input.pages) {
    parts.push(describePages(String(input.pages), unit));
  }
  if (input.range) {
    parts.push(`range ${input.range}`);
  }
  if (input.cells) {
    const cells = String(input.cells);
    parts.push(isOutline(cells) ? 'outline' : `${/[-,]/.test(cells) ? 'cells' : 'cell'} ${prettyRange(cells)}`);
  }
  if (input.outline === true && !isOutline(input.cells)) {
    parts.push('outline');
  }
  if (input.raw) {
    parts.push('as text');
  }
  if (input.view === 'image' || input.view === 'text') {
    parts.push(input.view === 'image' ? 'as pictures' : 'text only');
  }
  if (input.find) {
    parts.push(`find ${JSON.stringify(input.find)}`);
  }
  if (input.offset !== undefined || input.limit !== undefined) {
    parts.push(describeSpan(input.offset, input.limit, unit === 'sheet' ? 'row' : 'line'));
  }
  return parts.length ? parts.join(', ') : undefined;
}

/** The short message shown while the tool runs: "Reading notebook.ipynb, cells 3–7", "Reading deck.pptx, slides 3–5". */
export function invocationMessage(input: ReadInput): string {
  const name = baseName(String(input?.path ?? '')) || String(input?.path ?? '');
  if (input?.find) {
    const range = describeRange({ ...input, find: undefined });
    return `Searching ${name} for ${JSON.stringify(input.find)}${range ? `, ${range}` : ''}`;
  }
  const range = describeRange(input ?? { path: '' });
  return range ? `Reading ${name}, ${range}` : `Reading ${name}`;
}

/**
 * What a finished read covered, from the result: "lines 1–120 of 540", "pages 2–3 of 4", "cells 3–7 of 12",
 * "slides 3–5 of 12, lines 1–80", "sheet 2 of 3, from row 2001".
 */
export function describeResult(result: ReadResult, input: ReadInput): string {
  if (result.isError) {
    return result.error?.code ?? 'error';
  }
  const hits = result.shown?.hits;
  if (hits) {
    const what = input.find ? ` of ${JSON.stringify(input.find)}` : '';
    return hits.length === 0 ? `no hit${what}` : `${count(hits.length, 'hit')}${what}`;
  }
  const of = (total: number | undefined) => (total !== undefined ? ` of ${total}` : '');
  if (input.outline === true && result.kind !== 'notebook' && result.kind !== 'directory') {
    const entries = shownOutline(result);
    const more = result.truncated ? ', more follow' : '';
    return entries ? `outline, entries ${entries[0]}–${entries[1]}${more}` : 'outline, no entries';
  }
  const lines = () => {
    const [first, last] = shownLines(result) ?? [result.startLine, result.endLine];
    if (first === undefined || last === undefined) {
      return undefined;
    }
    return first < 0 ? spanFromEnd(first, last) : `lines ${first}–${last}${of(result.totalLines)}`;
  };
  switch (result.kind) {
    case 'pdf': {
      const pages = shownPages(result);
      if (pages.length > 0 && !(pages.length === result.totalPages && !input.pages)) {
        return `${pages.length === 1 ? 'page' : 'pages'} ${formatNumbers(pages)}${of(result.totalPages)}`;
      }
      return input.pages
        ? `pages ${prettyRange(String(input.pages))}${of(result.totalPages)}`
        : count(result.totalPages, 'page');
    }
    case 'notebook': {
      const outline = isOutline(input.cells) || input.outline === true;
      const cells = shownCells(result);
      const what = outline ? 'outline, ' : '';
      if (cells.length > 0 && cells.length === result.totalCells) {
        return outline ? `outline of ${count(result.totalCells, 'cell')}` : count(result.totalCells, 'cell');
      }
      if (cells.length > 0) {
        return `${what}${cells.length === 1 ? 'cell' : 'cells'} ${formatNumbers(cells)}${of(result.totalCells)}`;
      }
      if (outline) {
        return `outline${of(result.totalCells)}`;
      }
      return input.cells
        ? `cells ${prettyRange(String(input.cells))}${of(result.totalCells)}`
        : count(result.totalCells, 'cell');
    }
    case 'presentation':
    case 'spreadsheet': {
      const unit = result.kind === 'spreadsheet' ? 'sheet' : 'slide';
      const parts = [
        input.pages
          ? `${describePages(String(input.pages), unit)}${of(result.totalPages)}`
          : count(result.totalPages, unit),
      ];
      if (input.offset !== undefined || input.limit !== undefined) {
        // A deck is numbered in lines like a document; a workbook's offset and limit count sheet rows.
        const span = unit === 'slide' ? lines() : undefined;
        parts.push(span ?? describeSpan(input.offset, input.limit, unit === 'sheet' ? 'row' : 'line'));
      }
      return parts.join(', ');
    }
    case 'image':
      return 'image';
    case 'directory':
      return 'directory listing';
    case 'archive':
      return 'archive listing';
    default:
      return lines() ?? result.kind;
  }
}

/** Whether `cells` asks for the notebook's outline (one line per cell) rather than cells. */
export function isOutline(cells: string | undefined): boolean {
  return typeof cells === 'string' && cells.trim().toLowerCase() === 'outline';
}
