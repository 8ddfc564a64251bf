// Activation: creates the pieces and connects them to VS Code. Each piece lives in its own module.

import * as vscode from 'vscode';
import { AgentView, SCHEME } from './agentView';
import { READ_METHOD, type ReadParams, type ReadResult } from './protocol';
import { syncNotebookOutputs } from './notebookSync';
import { onInterpreterChange } from './python';
import { ConsentGrants } from './grants';
import { ReadLog, ReadRevealer, type ReadEntry } from './reads';
import { ServerManager } from './server';
import { affectsServer, readSettings } from './settings';
import { createStatusBar } from './statusBar';
import { MANY_TOOL_NAME, ReadManyTool, ReadTool, TOOL_NAME } from './tool';

/** What the extension exports: used by its integration tests, and by anyone scripting it. */
export interface AgentreadApi {
  server: ServerManager;
  tool: ReadTool;
  manyTool: ReadManyTool;
  reads: ReadLog;
  /** Sends `agentread/read` as is (no consent added). */
  read(params: ReadParams): Promise<ReadResult>;
}

let running: ServerManager | undefined;

export function activate(context: vscode.ExtensionContext): AgentreadApi {
  const log = vscode.window.createOutputChannel('agentread', { log: true });
  const server = new ServerManager(context.extensionPath, log);
  running = server;
  const reads = new ReadLog();
  // What the user allowed the agent to read, shared by both tools, for as long as this window runs.
  const grants = new ConsentGrants();
  const tool = new ReadTool(server, reads, grants);
  const manyTool = new ReadManyTool(server, reads, grants);
  const agentView = new AgentView(server);
  const revealer = new ReadRevealer(agentView);
  /** "Show as the agent sees it" for a file (the one clicked, else the active one): its read, or its outline. */
  const showFile = (uri: vscode.Uri | undefined, outline: boolean) => {
    const target = uri instanceof vscode.Uri ? uri : activeFile();
    if (!target || target.scheme !== 'file') {
      void vscode.window.showInformationMessage('agentread: open a file (or pick one in the explorer) first.');
      return undefined;
    }
    return showOrReport(() => agentView.show({ path: target.fsPath, ...(outline ? { outline: true } : {}) }));
  };

  context.subscriptions.push(
    log,
    server,
    reads,
    revealer,
    agentView,
    createStatusBar(server),
    syncNotebookOutputs(server),
    vscode.lm.registerTool(TOOL_NAME, tool),
    vscode.lm.registerTool(MANY_TOOL_NAME, manyTool),
    vscode.workspace.registerTextDocumentContentProvider(SCHEME, agentView),
    vscode.window.createTreeView('agentread.reads', { treeDataProvider: reads }),
    vscode.commands.registerCommand('agentread.restartServer', () => server.restart('restart command')),
    vscode.commands.registerCommand('agentread.showLog', () => log.show()),
    vscode.commands.registerCommand('agentread.clearReads', () => reads.clear()),
    vscode.commands.registerCommand('agentread.revealRead', (entry: ReadEntry) => revealer.reveal(entry)),
    vscode.commands.registerCommand('agentread.showAsAgentSees', (uri?: vscode.Uri) => showFile(uri, false)),
    vscode.commands.registerCommand('agentread.showOutlineAsAgentSees', (uri?: vscode.Uri) => showFile(uri, true)),
    vscode.commands.registerCommand('agentread.showCellAsAgentSees', (cell?: vscode.NotebookCell) => {
      const target = cell?.notebook ? cell : activeCell();
      if (!target || target.notebook.uri.scheme !== 'file') {
        void vscode.window.showInformationMessage('agentread: select a cell of a saved notebook first.');
        return undefined;
      }
      return showOrReport(() => agentView.show({ path: target.notebook.uri.fsPath, cells: String(target.index + 1) }));
    }),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (affectsServer(event)) {
        void server.restart('settings changed');
      }
    }),
  );

  void onInterpreterChange(() => {
    if (!readSettings().python) {
      void server.restart('the Python interpreter changed');
    }
  }).then((listener) => listener && context.subscriptions.push(listener));

  void server.restart('activation');

  return {
    server,
    tool,
    manyTool,
    reads,
    read: (params) => server.send(READ_METHOD, params) as Promise<ReadResult>,
  };
}

/** Stops the server and waits for it (the rest is disposed through context.subscriptions). */
export function deactivate(): Promise<void> | undefined {
  return running?.dispose();
}

/** The file of the active editor: the notebook when a notebook (or one of its cells) has focus. */
function activeFile(): vscode.Uri | undefined {
  const text = vscode.window.activeTextEditor?.document.uri;
  if (text && text.scheme === 'file') {
    return text;
  }
  return vscode.window.activeNotebookEditor?.notebook.uri ?? text;
}

function activeCell(): vscode.NotebookCell | undefined {
  const editor = vscode.window.activeNotebookEditor;
  const index = editor?.selection.start;
  return editor && index !== undefined && index < editor.notebook.cellCount ? editor.notebook.cellAt(index) : undefined;
}

async function showOrReport<T>(show: () => Promise<T>): Promise<T | undefined> {
  try {
    return await show();
  } catch (error) {
    void vscode.window.showErrorMessage(`agentread: ${(error as Error).message}`);
    return undefined;
  }
}
