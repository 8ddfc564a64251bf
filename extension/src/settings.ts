// The settings the extension reads (contributed in package.json under `agentread.*`).

import * as vscode from 'vscode';

export const SECTION = 'agentread';

export interface Settings {
  /** Interpreter path from `agentread.python`, `${workspaceFolder}` expanded; empty when unset. */
  python: string;
  /** Globs from `agentread.sensitiveFiles`, sent to the server and used to ask for consent. */
  sensitiveFiles: string[];
  /** `agentread.unchangedReadStub`: a re-read of an unchanged file answers one short line. */
  unchangedReadStub: boolean;
}

export function readSettings(): Settings {
  const config = vscode.workspace.getConfiguration(SECTION);
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? '';
  const python = (config.get<string>('python') ?? '').trim().replace(/\$\{workspaceFolder\}/g, folder);
  const sensitiveFiles = (config.get<string[]>('sensitiveFiles') ?? []).filter(
    (pattern) => typeof pattern === 'string' && pattern.trim() !== '',
  );
  return { python, sensitiveFiles, unchangedReadStub: config.get<boolean>('unchangedReadStub') === true };
}

/** Settings the server is started with: a change restarts it (the trace level is picked up by the client itself). */
const SERVER_SETTINGS = ['python', 'sensitiveFiles', 'unchangedReadStub'];

export function affectsServer(event: vscode.ConfigurationChangeEvent): boolean {
  return SERVER_SETTINGS.some((name) => event.affectsConfiguration(`${SECTION}.${name}`));
}

/** The workspace folders as file-system paths. */
export function workspaceFolderPaths(): string[] {
  return (vscode.workspace.workspaceFolders ?? [])
    .filter((folder) => folder.uri.scheme === 'file')
    .map((folder) => folder.uri.fsPath);
}
