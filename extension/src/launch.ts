// How the Python server is started: which interpreter qualifies, which PYTHONPATH it gets, which command
// runs. No `vscode` import: the unit tests start the server exactly as the extension does.

import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The oldest Python the engine supports (pyproject.toml `requires-python`). */
export const MIN_PYTHON: readonly [number, number] = [3, 10];

/** How long an interpreter may take to answer the probe (a cold start on a slow disk). */
const PROBE_TIMEOUT_MS = 20_000;

/** Where the libraries bundled for Python X.Y live: extension/bundled/libs/cpXY, plus libs/common. */
export const BUNDLED_LIBS = ['extension', 'bundled', 'libs'];

/**
 * Run in the candidate interpreter, with argv[1] the extension root: its version, and whether the server's
 * imports resolve with the PYTHONPATH the server will get (a missing dependency is named, so the message
 * can say what to install). One process, since a cold interpreter takes a while to start.
 */
const PROBE_SCRIPT = [
  'import json, os, sys',
  'out = {"version": list(sys.version_info[:2]), "executable": sys.executable, "missing": None}',
  'if sys.version_info >= (3, 10):',
  `    libs = os.path.join(sys.argv[1], ${BUNDLED_LIBS.map((part) => JSON.stringify(part)).join(', ')}, "cp%d%d" % sys.version_info[:2])`,
  '    if os.path.isdir(libs):',
  '        sys.path[0:0] = [libs, os.path.join(os.path.dirname(libs), "common")]',
  '    sys.path.insert(0, os.path.join(sys.argv[1], "python"))',
  '    try:',
  '        import agentread.server',
  '    except ImportError as exc:',
  '        out["missing"] = getattr(exc, "name", None) or str(exc)',
  'print(json.dumps(out))',
].join('\n');

export interface Probe {
  version: [number, number];
  executable: string;
  /** The module that failed to import, when the server cannot start with this interpreter. */
  missing: string | null;
}

/** The directories on the server's PYTHONPATH: the engine, then the libraries bundled for this Python. */
export function pythonPath(extensionRoot: string, version?: readonly [number, number]): string[] {
  const entries = [path.join(extensionRoot, 'python')];
  if (version) {
    const bundled = path.join(extensionRoot, ...BUNDLED_LIBS, `cp${version[0]}${version[1]}`);
    if (fs.existsSync(bundled)) {
      entries.push(bundled, path.join(extensionRoot, ...BUNDLED_LIBS, 'common'));
    }
  }
  return entries;
}

/** The environment of the server process. */
export function serverEnv(
  extensionRoot: string,
  version: readonly [number, number] | undefined,
  base: NodeJS.ProcessEnv = process.env,
): NodeJS.ProcessEnv {
  return {
    ...base,
    PYTHONPATH: pythonPath(extensionRoot, version).join(path.delimiter),
    PYTHONUNBUFFERED: '1',
    PYTHONIOENCODING: 'utf-8',
    // A user's PYTHONSTARTUP or site customisations must not write to stdout, the protocol channel.
    PYTHONSTARTUP: '',
  };
}

/** The server command: `python -m agentread serve`. */
export function serverArgs(): string[] {
  return ['-m', 'agentread', 'serve'];
}

/** Asks `python` for its version and whether the server can start with it. */
export function probePython(python: string, extensionRoot: string): Promise<Probe> {
  const env: NodeJS.ProcessEnv = { ...process.env, PYTHONPATH: '', PYTHONSTARTUP: '' };
  return new Promise<Probe>((resolve, reject) => {
    execFile(python, ['-c', PROBE_SCRIPT, extensionRoot], { env, timeout: PROBE_TIMEOUT_MS }, (error, stdout, stderr) => {
      if (error) {
        reject(new Error(`${python} could not be run: ${(stderr || error.message).trim()}`));
        return;
      }
      try {
        const line = stdout.trim().split('\n').pop() ?? '';
        resolve(JSON.parse(line) as Probe);
      } catch {
        reject(new Error(`${python} did not answer as a Python interpreter: ${stdout.trim().slice(0, 200)}`));
      }
    });
  });
}

export function isSupported(version: readonly [number, number]): boolean {
  return version[0] > MIN_PYTHON[0] || (version[0] === MIN_PYTHON[0] && version[1] >= MIN_PYTHON[1]);
}

/** Why a probed interpreter cannot run the server, or undefined when it can. */
export function probeProblem(probe: Probe): string | undefined {
  const [major, minor] = probe.version;
  if (!isSupported(probe.version)) {
    return `${probe.executable} is Python ${major}.${minor}; agentread needs Python ${MIN_PYTHON[0]}.${MIN_PYTHON[1]} or newer.`;
  }
  if (probe.missing) {
    return (
      `${probe.executable} (Python ${major}.${minor}) cannot import ${probe.missing}. This build of agentread ` +
      `bundles its libraries for the Python versions it was packaged for; with another version, install them ` +
      `into that interpreter (\`python -m pip install pygls lsprotocol nbformat pypdf cryptography filetype ` +
      `Pillow pillow-heif charset-normalizer\`) or choose another interpreter in the agentread.python setting.`
    );
  }
  return undefined;
}
