// Starts the real Python server the way the extension does (same interpreter probe, PYTHONPATH and
// command) and talks to it with vscode-jsonrpc, as vscode-languageclient would.

import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  createMessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  type MessageConnection,
} from 'vscode-jsonrpc/node';
import { initializationOptions, probePython, probeProblem, serverArgs, serverEnv } from '../../src/launch';
import type { SendRequest } from '../../src/protocol';

/** The repository root, which is the extension root. */
export const EXTENSION_ROOT = path.resolve(__dirname, '..', '..', '..', '..');

export interface Server {
  connection: MessageConnection;
  process: ChildProcess;
  send: SendRequest;
  stderr: () => string;
  stop(): Promise<void>;
}

/** Starts the server on `workspace` with the settings the extension would pass (the server's defaults if none). */
export async function startServer(
  workspace: string,
  sensitivePatterns?: string[],
  settings: { unchangedReadStub?: boolean } = {},
): Promise<Server> {
  const python = process.env.AGENTREAD_PYTHON || 'python3';
  const probe = await probePython(python, EXTENSION_ROOT);
  const problem = probeProblem(probe);
  if (problem) {
    throw new Error(problem);
  }
  const child = spawn(python, serverArgs(), {
    cwd: EXTENSION_ROOT,
    env: serverEnv(EXTENSION_ROOT, probe.version),
    stdio: 'pipe',
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += String(chunk)));
  const connection = createMessageConnection(
    new StreamMessageReader(child.stdout),
    new StreamMessageWriter(child.stdin),
  );
  connection.listen();
  const uri = pathToFileURL(workspace).href;
  await connection.sendRequest('initialize', {
    processId: process.pid,
    rootUri: uri,
    capabilities: {},
    workspaceFolders: [{ uri, name: path.basename(workspace) }],
    initializationOptions: initializationOptions({ sensitiveFiles: sensitivePatterns, ...settings }),
  });
  await connection.sendNotification('initialized', {});
  return {
    connection,
    process: child,
    send: (method, params, token) =>
      token === undefined
        ? connection.sendRequest(method, params)
        : connection.sendRequest(method, params, token as never),
    stderr: () => stderr,
    stop: async () => {
      try {
        await Promise.race([connection.sendRequest('shutdown'), new Promise((r) => setTimeout(r, 2000))]);
        await connection.sendNotification('exit');
      } catch {
        // already gone
      }
      connection.dispose();
      if (child.exitCode === null) {
        await new Promise((resolve) => {
          const timer = setTimeout(() => child.kill(), 2000);
          child.once('exit', () => {
            clearTimeout(timer);
            resolve(undefined);
          });
        });
      }
    },
  };
}
