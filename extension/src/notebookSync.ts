// Keeps the server told of the outputs of open notebooks, so a read of an open notebook shows what the
// user sees: cell text comes through LSP notebook sync, outputs through `agentread/notebookOutputs`.

import * as vscode from 'vscode';
import { notebookOutputsParams, OUTPUTS_METHOD } from './outputs';
import type { ServerManager } from './server';

/** Outputs stream in while a cell runs; they are sent once they settle for this long. */
const SETTLE_MS = 300;

export function syncNotebookOutputs(server: ServerManager): vscode.Disposable {
  const timers = new Map<string, NodeJS.Timeout>();
  const send = (notebook: vscode.NotebookDocument) => {
    if (notebook.uri.scheme !== 'file' || notebook.isClosed) {
      return;
    }
    const params = notebookOutputsParams(
      notebook.uri.toString(),
      notebook.getCells().map((cell) => ({
        isCode: cell.kind === vscode.NotebookCellKind.Code,
        outputs: cell.outputs,
        executionCount: cell.executionSummary?.executionOrder,
      })),
    );
    server.notify(OUTPUTS_METHOD, params);
  };
  const schedule = (notebook: vscode.NotebookDocument) => {
    const key = notebook.uri.toString();
    clearTimeout(timers.get(key));
    timers.set(
      key,
      setTimeout(() => {
        timers.delete(key);
        send(notebook);
      }, SETTLE_MS),
    );
  };
  return vscode.Disposable.from(
    vscode.workspace.onDidOpenNotebookDocument(schedule),
    vscode.workspace.onDidChangeNotebookDocument((event) => {
      if (event.contentChanges.length > 0 || event.cellChanges.some((change) => change.outputs || change.executionSummary)) {
        schedule(event.notebook);
      }
    }),
    // A new server knows nothing yet.
    server.onDidChangeState((state) => {
      if (state === 'running') {
        vscode.workspace.notebookDocuments.forEach(schedule);
      }
    }),
    { dispose: () => timers.forEach((timer) => clearTimeout(timer)) },
  );
}
