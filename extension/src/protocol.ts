// The contract with the Python server (DESIGN.md, "The contract"): the request the tool forwards and the
// result it gets back. No `vscode` import here, so the unit tests can use it against the real server.

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
}

/** What the server receives: the model's input plus the user's consent, which only the extension sets. */
export interface ReadParams extends ReadInput {
  consent?: boolean;
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

export type ResultKind = 'text' | 'notebook' | 'pdf' | 'image' | 'directory' | 'error';

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
  encoding?: string;
  isError: boolean;
  error?: { code: string; message: string };
}

/** Sends one request; `vscode-languageclient` and `vscode-jsonrpc` connections both fit. */
export type SendRequest = (method: string, params: unknown, token?: unknown) => Promise<unknown>;

const INPUT_FIELDS = ['path', 'offset', 'limit', 'pages', 'cells', 'raw'] as const;

/**
 * The params for one read. Only the fields of the contract are forwarded, so nothing the model invents
 * (a `consent` of its own, say) reaches the server; the server validates the values and answers a
 * malformed request with JSON-RPC -32602.
 */
export function toReadParams(input: ReadInput, consent: boolean): ReadParams {
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
  return params as unknown as ReadParams;
}

/** Forwards one read to the server, with the caller's cancellation token. */
export async function forwardRead(
  send: SendRequest,
  input: ReadInput,
  consent: boolean,
  token?: unknown,
): Promise<ReadResult> {
  const result = await send(READ_METHOD, toReadParams(input, consent), token);
  return result as ReadResult;
}

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

/** The part of a read the input asks for, in words: "cells 3–7", "lines 10–59", "page 2". */
export function describeRange(input: ReadInput): string | undefined {
  const parts: string[] = [];
  if (input.pages) {
    const pages = String(input.pages);
    parts.push(`${/[-,]/.test(pages) ? 'pages' : 'page'} ${prettyRange(pages)}`);
  }
  if (input.cells) {
    const cells = String(input.cells);
    parts.push(cells === 'outline' ? 'outline' : `${/[-,]/.test(cells) ? 'cells' : 'cell'} ${prettyRange(cells)}`);
  }
  if (input.raw) {
    parts.push('as text');
  }
  if (input.offset !== undefined || input.limit !== undefined) {
    const first = input.offset ?? 1;
    parts.push(input.limit !== undefined ? `lines ${first}–${first + input.limit - 1}` : `from line ${first}`);
  }
  return parts.length ? parts.join(', ') : undefined;
}

/** The short message shown while the tool runs: "Reading notebook.ipynb, cells 3–7". */
export function invocationMessage(input: ReadInput): string {
  const name = baseName(String(input?.path ?? '')) || String(input?.path ?? '');
  const range = describeRange(input ?? { path: '' });
  return range ? `Reading ${name}, ${range}` : `Reading ${name}`;
}

/** What a finished read covered, from the result: "lines 1–120 of 540", "pages 2–3 of 4", "cells 3–7 of 12". */
export function describeResult(result: ReadResult, input: ReadInput): string {
  if (result.isError) {
    return result.error?.code ?? 'error';
  }
  const of = (total: number | undefined) => (total !== undefined ? ` of ${total}` : '');
  switch (result.kind) {
    case 'pdf':
      return input.pages
        ? `pages ${prettyRange(String(input.pages))}${of(result.totalPages)}`
        : `${result.totalPages ?? '?'} pages`;
    case 'notebook':
      return input.cells
        ? `cells ${prettyRange(String(input.cells))}${of(result.totalCells)}`
        : `${result.totalCells ?? '?'} cells`;
    case 'image':
      return 'image';
    case 'directory':
      return 'directory listing';
    default:
      if (result.startLine !== undefined && result.endLine !== undefined) {
        return `lines ${result.startLine}–${result.endLine}${of(result.totalLines)}`;
      }
      return result.kind;
  }
}

/** "3", "2-7", "5-": 0-based [start, end) cell indexes; undefined for a cell id, a list or "outline". */
export function cellSpan(cells: string | undefined, cellCount: number): [number, number] | undefined {
  const match = /^\s*(\d+)\s*(?:([-–])\s*(\d*)\s*)?$/.exec(cells ?? '');
  if (!match) {
    return undefined;
  }
  const first = Math.max(1, Number(match[1]));
  const last = Math.min(cellCount, match[2] ? (match[3] ? Number(match[3]) : cellCount) : first);
  return last >= first ? [first - 1, last] : undefined;
}
