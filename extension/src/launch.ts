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

/** Where the engine's Python dependencies are declared; the .vsix carries it (see .vscodeignore). */
export const PYPROJECT = 'pyproject.toml';

/**
 * Run in the candidate interpreter, with argv[1] the extension root and argv[2] the engine's requirements
 * (JSON): its version, which requirements are not installed (or installed in a version that does not
 * satisfy them) with the PYTHONPATH the server will get, and whether the server's imports resolve. One
 * process, since a cold interpreter takes a while to start.
 */
const PROBE_SCRIPT = [
  'import json, os, re, sys',
  'out = {"version": list(sys.version_info[:2]), "executable": sys.executable, "missing": None, "unmet": []}',
  'if sys.version_info >= (3, 10):',
  `    libs = os.path.join(sys.argv[1], ${BUNDLED_LIBS.map((part) => JSON.stringify(part)).join(', ')}, "cp%d%d" % sys.version_info[:2])`,
  '    if os.path.isdir(libs):',
  '        sys.path[0:0] = [libs, os.path.join(os.path.dirname(libs), "common")]',
  '    sys.path.insert(0, os.path.join(sys.argv[1], "python"))',
  '    from importlib import metadata',
  '    try:',
  '        from packaging.requirements import Requirement',
  '    except ImportError:',
  '        try:',
  '            from pip._vendor.packaging.requirements import Requirement',
  '        except ImportError:',
  '            Requirement = None',
  '    for text in json.loads(sys.argv[2]):',
  '        req = Requirement(text) if Requirement else None',
  '        if req is None and ";" in text:',
  '            continue  # an environment marker, and nothing here to evaluate it with',
  '        if req is not None and req.marker is not None and not req.marker.evaluate():',
  '            continue',
  '        name = req.name if req else re.match(r"[A-Za-z0-9._-]+", text).group(0)',
  '        try:',
  '            found = metadata.version(name)',
  '        except metadata.PackageNotFoundError:',
  '            out["unmet"].append({"requirement": text, "name": name, "found": None})',
  '            continue',
  '        try:',
  '            met = req is None or req.specifier.contains(found, prereleases=True)',
  '        except Exception:',
  '            met = True  # a version packaging cannot parse (not PEP 440): the import check below decides',
  '        if not met:',
  '            out["unmet"].append({"requirement": text, "name": name, "found": found})',
  '    try:',
  '        import agentread.serve.jsonrpc',
  '    except ImportError as exc:',
  '        out["missing"] = getattr(exc, "name", None) or str(exc)',
  'print(json.dumps(out))',
].join('\n');

/** A requirement of the engine that the interpreter does not meet. */
export interface Unmet {
  /** As pyproject.toml states it: `python-docx>=1.1`. */
  requirement: string;
  name: string;
  /** The installed version that does not satisfy it; null when the package is not installed. */
  found: string | null;
}

export interface Probe {
  version: [number, number];
  executable: string;
  /** The module that failed to import, when the server cannot start with this interpreter. */
  missing: string | null;
  /** The requirements from pyproject.toml this interpreter (with the bundled libraries) does not meet. */
  unmet?: Unmet[];
  /** All the requirements checked: pyproject.toml's dependencies. */
  requirements?: string[];
  /** The Python versions this build bundles libraries for. */
  bundled?: string[];
}

/**
 * The `[project]` table's `dependencies` of a pyproject.toml: the strings of that array (TOML basic or
 * literal strings, comments and trailing commas allowed). Enough TOML for this one key.
 */
export function projectDependencies(toml: string): string[] {
  const project = /^\[project\][ \t]*(?:#.*)?$/m.exec(toml);
  if (!project) {
    return [];
  }
  const nextTable = /^\[/m.exec(toml.slice(project.index + project[0].length));
  const table = toml.slice(project.index, nextTable ? project.index + project[0].length + nextTable.index : undefined);
  const key = /^dependencies\s*=\s*\[/m.exec(table);
  if (!key) {
    return [];
  }
  const found: string[] = [];
  let i = key.index + key[0].length;
  while (i < table.length) {
    const char = table[i];
    if (char === ']') {
      return found;
    } else if (char === '#') {
      i = table.indexOf('\n', i);
      i = i < 0 ? table.length : i;
    } else if (char === '"' || char === "'") {
      let value = '';
      i++;
      while (i < table.length && table[i] !== char) {
        if (char === '"' && table[i] === '\\') {
          i++; // an escape: requirements need none but \" and \\
        }
        value += table[i++];
      }
      found.push(value);
      i++;
    } else {
      i++; // whitespace, newlines, commas
    }
  }
  throw new Error('pyproject.toml: the dependencies array is not closed');
}

/** The engine's requirements, from the pyproject.toml the extension carries. */
export function pythonRequirements(extensionRoot: string): string[] {
  try {
    return projectDependencies(fs.readFileSync(path.join(extensionRoot, PYPROJECT), 'utf8'));
  } catch {
    return []; // the server import check still runs
  }
}

/** The Python versions this build bundles libraries for ("3.11"), from extension/bundled/libs/cpXY. */
export function bundledPythonVersions(extensionRoot: string): string[] {
  try {
    return fs
      .readdirSync(path.join(extensionRoot, ...BUNDLED_LIBS))
      .map((name) => /^cp(\d)(\d+)$/.exec(name))
      .filter((match): match is RegExpExecArray => match !== null)
      .map((match) => `${match[1]}.${match[2]}`)
      .sort((a, b) => Number(a.split('.')[1]) - Number(b.split('.')[1]));
  } catch {
    return [];
  }
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

/**
 * The server's initializationOptions (docs/CONTRACT.md, "Workspace, consent, live documents") for these
 * settings: the sensitive patterns (the server's own defaults when none are given), and the unchanged-read
 * stub when it is on.
 */
export function initializationOptions(settings: {
  sensitiveFiles?: readonly string[];
  unchangedReadStub?: boolean;
}): Record<string, unknown> {
  return {
    ...(settings.sensitiveFiles ? { sensitivePatterns: settings.sensitiveFiles } : {}),
    ...(settings.unchangedReadStub ? { unchangedStub: true } : {}),
  };
}

/** The server command: `python -m agentread serve`. */
export function serverArgs(): string[] {
  return ['-m', 'agentread', 'serve'];
}

/** Asks `python` for its version and whether the server can start with it. */
export function probePython(python: string, extensionRoot: string): Promise<Probe> {
  const env: NodeJS.ProcessEnv = { ...process.env, PYTHONPATH: '', PYTHONSTARTUP: '' };
  const requirements = pythonRequirements(extensionRoot);
  const bundled = bundledPythonVersions(extensionRoot);
  return new Promise<Probe>((resolve, reject) => {
    execFile(
      python,
      ['-c', PROBE_SCRIPT, extensionRoot, JSON.stringify(requirements)],
      { env, timeout: PROBE_TIMEOUT_MS },
      (error, stdout, stderr) => {
        if (error) {
          reject(new Error(`${python} could not be run: ${(stderr || error.message).trim()}`));
          return;
        }
        try {
          const line = stdout.trim().split('\n').pop() ?? '';
          resolve({ ...(JSON.parse(line) as Probe), requirements, bundled });
        } catch {
          reject(new Error(`${python} did not answer as a Python interpreter: ${stdout.trim().slice(0, 200)}`));
        }
      },
    );
  });
}

export function isSupported(version: readonly [number, number]): boolean {
  return version[0] > MIN_PYTHON[0] || (version[0] === MIN_PYTHON[0] && version[1] >= MIN_PYTHON[1]);
}

/** "a", "a and b", "a, b and c". */
function listed(items: readonly string[]): string {
  return items.length > 1 ? `${items.slice(0, -1).join(', ')} and ${items.at(-1)}` : (items[0] ?? '');
}

/** A requirement in a shell command: double quotes suit sh, PowerShell and cmd alike. */
function quoted(requirement: string): string {
  return `"${requirement.replace(/"/g, '')}"`;
}

/** Why a probed interpreter cannot run the server, or undefined when it can; the advice names what to install. */
export function probeProblem(probe: Probe): string | undefined {
  const [major, minor] = probe.version;
  if (!isSupported(probe.version)) {
    return `${probe.executable} is Python ${major}.${minor}; agentread needs Python ${MIN_PYTHON[0]}.${MIN_PYTHON[1]} or newer.`;
  }
  const unmet = probe.unmet ?? [];
  if (!probe.missing && unmet.length === 0) {
    return undefined;
  }
  const absent = unmet.filter((item) => item.found === null).map((item) => item.name);
  const old = unmet.filter((item) => item.found !== null).map((item) => `${item.name} ${item.found} (needs ${item.requirement})`);
  const lacks = [
    ...(absent.length ? [`lacks ${listed(absent)}`] : []),
    ...(old.length ? [`has ${listed(old)}`] : []),
  ];
  const what = lacks.length ? lacks.join(' and ') : `cannot import ${probe.missing}`;
  // What to install: the requirements not met, else (an import failed all the same) every requirement.
  const install = unmet.length ? unmet.map((item) => item.requirement) : (probe.requirements ?? []);
  const command = install.length
    ? `\`${probe.executable} -m pip install ${install.map(quoted).join(' ')}\``
    : `\`${probe.executable} -m pip install <the agentread extension folder>\``;
  const bundled = probe.bundled ?? [];
  const versions = bundled.length ? `Python ${listed(bundled)}` : 'the Python versions it was packaged for';
  return (
    `${probe.executable} (Python ${major}.${minor}) ${what}, which the agentread server needs. This build of ` +
    `agentread bundles its libraries for ${versions}; with another version, install them into that ` +
    `interpreter (${command}) or choose another interpreter in the agentread.python setting.`
  );
}
