// The settings the extension reads (contributed in package.json under `agentread.*`).

import * as vscode from 'vscode';

export const SECTION = 'agentread';

export interface Settings {
  /** Interpreter path from `agentread.python`, `${workspaceFolder}` expanded; empty when unset. */
  python: string;
  /** Globs from `agentread.sensitiveFiles`, sent to the server and used to ask for consent. */
  sensitiveFiles: string[];
}

export function readSettings(): Settings {
  const config = vscode.workspace.getConfiguration(SECTION);
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? '';
  const python = (config.get<string>('python') ?? '').trim().replace(/\$\{workspaceFolder\}/g, folder);
  const sensitiveFiles = (config.get<string[]>('sensitiveFiles') ?? []).filter(
    (pattern) => typeof pattern === 'string' && pattern.trim() !== '',
  );
  return { python, sensitiveFiles };
}

/** Settings whose change needs a server restart (the trace level is picked up by the client itself). */
export function affectsServer(event: vscode.ConfigurationChangeEvent): boolean {
  return (
    event.affectsConfiguration(`${SECTION}.python`) || event.affectsConfiguration(`${SECTION}.sensitiveFiles`)
  );
}

/** The workspace folders as file-system paths. */
export function workspaceFolderPaths(): string[] {
  return (vscode.workspace.workspaceFolders ?? [])
    .filter((folder) => folder.uri.scheme === 'file')
    .map((folder) => folder.uri.fsPath);
}
