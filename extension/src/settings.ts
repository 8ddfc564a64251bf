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
  /** `agentread.maxReplyBytes`: the most text one reply holds; 0 picks it from the host (replySize.ts). */
  maxReplyBytes: number;
}

export function readSettings(): Settings {
  const config = vscode.workspace.getConfiguration(SECTION);
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? '';
  const python = (config.get<string>('python') ?? '').trim().replace(/\$\{workspaceFolder\}/g, folder);
  const sensitiveFiles = (config.get<string[]>('sensitiveFiles') ?? []).filter(
    (pattern) => typeof pattern === 'string' && pattern.trim() !== '',
  );
  const maxReplyBytes = config.get<number>('maxReplyBytes');
  return {
    python,
    sensitiveFiles,
    unchangedReadStub: config.get<boolean>('unchangedReadStub') === true,
    maxReplyBytes: typeof maxReplyBytes === 'number' && maxReplyBytes > 0 ? maxReplyBytes : 0,
  };
}

/** VS Code's chat agent (Copilot Chat) writes a tool result whose text is over this setting to a file, and the
 * model then gets one line naming the file instead of the result. */
const HOST_LARGE_RESULTS = 'github.copilot.chat.agent.largeToolResultsToDisk';

/** The host's limit on a tool result's text, in bytes, where the chat agent has one and it is on. */
export function hostToolResultLimit(): number | undefined {
  const section = vscode.workspace.getConfiguration(HOST_LARGE_RESULTS);
  const threshold = section.inspect<number>('thresholdBytes');
  const known = [threshold?.defaultValue, threshold?.globalValue, threshold?.workspaceValue].some((v) => v !== undefined);
  if (!known || section.get<boolean>('enabled') === false) {
    return undefined;
  }
  const value = section.get<number>('thresholdBytes');
  return typeof value === 'number' && value > 0 ? value : undefined;
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
