// The outputs of notebook cells as the editor holds them, converted to nbformat outputs for the server
// (`agentread/notebookOutputs`): LSP notebook sync carries the cells' text but not their outputs. No `vscode`
// import; the tests check it against the real server.

export const OUTPUTS_METHOD = 'agentread/notebookOutputs';

/** The shape of a `vscode.NotebookCellOutput`. */
export interface EditorOutput {
  items: ReadonlyArray<{ mime: string; data: Uint8Array }>;
  metadata?: Record<string, unknown>;
}

const STDOUT = 'application/vnd.code.notebook.stdout';
const STDERR = 'application/vnd.code.notebook.stderr';
const ERROR = 'application/vnd.code.notebook.error';
/** nbformat stores these base64-encoded; every other mime type as text. */
const BINARY_MIME = /^image\/(png|jpeg|gif|webp|bmp)$/;

const decoder = new TextDecoder();

function text(data: Uint8Array): string {
  return decoder.decode(data);
}

export function toNbformatOutput(output: EditorOutput): Record<string, unknown> {
  const items = output.items;
  const stream = items.find((item) => item.mime === STDOUT || item.mime === STDERR);
  if (stream) {
    return {
      output_type: 'stream',
      name: stream.mime === STDOUT ? 'stdout' : 'stderr',
      text: items
        .filter((item) => item.mime === stream.mime)
        .map((item) => text(item.data))
        .join(''),
    };
  }
  const error = items.find((item) => item.mime === ERROR);
  if (error) {
    let parsed: { name?: string; message?: string; stack?: string } = {};
    try {
      parsed = JSON.parse(text(error.data));
    } catch {
      parsed = { message: text(error.data) };
    }
    return {
      output_type: 'error',
      ename: parsed.name ?? 'Error',
      evalue: parsed.message ?? '',
      traceback: (parsed.stack ?? '').split('\n'),
    };
  }
  const data: Record<string, unknown> = {};
  for (const item of items) {
    data[item.mime] = BINARY_MIME.test(item.mime) ? Buffer.from(item.data).toString('base64') : text(item.data);
  }
  // The ipynb serializer keeps the nbformat output type and metadata in the output's metadata.
  const metadata = output.metadata ?? {};
  const isResult = metadata.outputType === 'execute_result';
  const nbOutput: Record<string, unknown> = {
    output_type: isResult ? 'execute_result' : 'display_data',
    data,
    metadata: typeof metadata.metadata === 'object' && metadata.metadata !== null ? metadata.metadata : {},
  };
  if (isResult) {
    nbOutput.execution_count = typeof metadata.executionCount === 'number' ? metadata.executionCount : null;
  }
  return nbOutput;
}

/** The params of one `agentread/notebookOutputs` notification: one entry per cell, in order. */
export function notebookOutputsParams(
  uri: string,
  cells: ReadonlyArray<{ isCode: boolean; outputs: readonly EditorOutput[]; executionCount?: number }>,
): { uri: string; cells: Array<{ outputs: unknown[] | null; executionCount: number | null }> } {
  return {
    uri,
    cells: cells.map((cell) => ({
      outputs: cell.isCode ? cell.outputs.map(toNbformatOutput) : null,
      executionCount: cell.executionCount ?? null,
    })),
  };
}
