// Finds the Python interpreter for the server: the `agentread.python` setting, else the interpreter
// selected in the Python extension (if installed), else `python3` on the PATH.

import * as vscode from 'vscode';
import { probePython, probeProblem, type Probe } from './launch';

const PYTHON_EXTENSION_ID = 'ms-python.python';

/** The slice of the Python extension's API used here. */
interface PythonExtensionApi {
  environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri): { path: string };
    resolveEnvironment(
      environment: { path: string } | string,
    ): Promise<{ executable: { uri?: vscode.Uri } } | undefined>;
    onDidChangeActiveEnvironmentPath: vscode.Event<unknown>;
  };
}

export interface Interpreter {
  command: string;
  /** Where the command came from, for the log and messages. */
  source: 'setting' | 'python extension' | 'PATH';
  probe: Probe;
}

async function pythonExtensionApi(): Promise<PythonExtensionApi | undefined> {
  const extension = vscode.extensions.getExtension<PythonExtensionApi>(PYTHON_EXTENSION_ID);
  if (!extension) {
    return undefined;
  }
  try {
    return extension.isActive ? extension.exports : await extension.activate();
  } catch {
    return undefined;
  }
}

async function pythonExtensionInterpreter(): Promise<string | undefined> {
  const environments = (await pythonExtensionApi())?.environments;
  if (!environments) {
    return undefined;
  }
  try {
    const resource = vscode.workspace.workspaceFolders?.[0]?.uri;
    const active = environments.getActiveEnvironmentPath(resource);
    const resolved = await environments.resolveEnvironment(active);
    return resolved?.executable.uri?.fsPath ?? active.path;
  } catch {
    return undefined;
  }
}

/** Calls `listener` when the user picks another interpreter in the Python extension. */
export async function onInterpreterChange(listener: () => void): Promise<vscode.Disposable | undefined> {
  const environments = (await pythonExtensionApi())?.environments;
  return environments?.onDidChangeActiveEnvironmentPath(() => listener());
}

export class NoPythonError extends Error {}

/**
 * The first candidate that can run the server. A configured interpreter that does not work is an error
 * (the user asked for it); otherwise each candidate is tried in turn and every problem is reported.
 */
export async function findInterpreter(configured: string, extensionRoot: string): Promise<Interpreter> {
  const candidates: Array<{ command: string; source: Interpreter['source'] }> = [];
  if (configured) {
    candidates.push({ command: configured, source: 'setting' });
  } else {
    const fromExtension = await pythonExtensionInterpreter();
    if (fromExtension) {
      candidates.push({ command: fromExtension, source: 'python extension' });
    }
    candidates.push({ command: 'python3', source: 'PATH' });
    if (process.platform === 'win32') {
      candidates.push({ command: 'python', source: 'PATH' });
    }
  }
  const problems: string[] = [];
  for (const candidate of candidates) {
    try {
      const probe = await probePython(candidate.command, extensionRoot);
      const problem = probeProblem(probe);
      if (!problem) {
        return { ...candidate, probe };
      }
      problems.push(`${candidate.source}: ${problem}`);
    } catch (error) {
      problems.push(`${candidate.source}: ${(error as Error).message}`);
    }
  }
  throw new NoPythonError(
    `agentread found no Python 3.10 or newer that can run its server. ${problems.join(' ')} ` +
      'Set agentread.python to a suitable interpreter, or select one in the Python extension.',
  );
}
