// The interpreter probe and the server's environment.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  initializationOptions,
  isSupported,
  probePython,
  probeProblem,
  projectDependencies,
  pythonPath,
  pythonRequirements,
  serverEnv,
  type Probe,
} from '../../src/launch';
import { EXTENSION_ROOT } from './harness';

const python = process.env.AGENTREAD_PYTHON || 'python3';

/** pyproject.toml's dependencies as a real TOML parser reads them (Python 3.11+), or undefined. */
function tomllibDependencies(file: string): string[] | undefined {
  try {
    const script = 'import json, sys, tomllib; print(json.dumps(tomllib.load(open(sys.argv[1], "rb"))["project"]["dependencies"]))';
    return JSON.parse(execFileSync(python, ['-c', script, file], { encoding: 'utf8' }));
  } catch {
    return undefined;
  }
}

describe('launch', () => {
  it('starts the server with the sensitive patterns, and the unchanged-read stub only when it is on', () => {
    assert.deepEqual(initializationOptions({ sensitiveFiles: ['.env'], unchangedReadStub: false }), { sensitivePatterns: ['.env'] });
    assert.deepEqual(initializationOptions({ sensitiveFiles: [], unchangedReadStub: true }), { sensitivePatterns: [], unchangedStub: true });
    assert.deepEqual(initializationOptions({}), {});
  });

  it('puts the engine first on PYTHONPATH', () => {
    assert.equal(pythonPath(EXTENSION_ROOT)[0], path.join(EXTENSION_ROOT, 'python'));
    assert.match(serverEnv(EXTENSION_ROOT, [3, 11], {}).PYTHONPATH ?? '', /python/);
  });

  it('accepts Python 3.10 and newer only', () => {
    assert.equal(isSupported([3, 9]), false);
    assert.equal(isSupported([3, 10]), true);
    assert.equal(isSupported([4, 0]), true);
    assert.match(probeProblem({ version: [3, 8], executable: '/usr/bin/python3.8', missing: null }) ?? '', /needs Python 3\.10/);
    assert.match(probeProblem({ version: [3, 12], executable: 'py', missing: 'pygls' }) ?? '', /cannot import pygls/);
  });

  it('finds a working interpreter on this machine', async () => {
    const probe = await probePython(python, EXTENSION_ROOT);
    assert.deepEqual(probe.unmet, []);
    assert.equal(probeProblem(probe), undefined);
  });

  it('reports an interpreter that does not exist', async () => {
    await assert.rejects(probePython('/nonexistent/python', EXTENSION_ROOT), /could not be run/);
  });
});

describe('the requirements the probe checks', () => {
  it('are pyproject.toml dependencies, read as TOML reads them', () => {
    const requirements = pythonRequirements(EXTENSION_ROOT);
    const expected = tomllibDependencies(path.join(EXTENSION_ROOT, 'pyproject.toml'));
    if (expected) {
      assert.deepEqual(requirements, expected);
    }
    for (const name of ['pygls', 'pypdfium2', 'orjson', 'python-docx', 'openpyxl', 'python-pptx']) {
      assert.ok(requirements.some((requirement) => requirement.startsWith(name)), `${name} in ${requirements.join(', ')}`);
    }
  });

  it('are read from the [project] table only, with comments, quotes and extras', () => {
    const toml = [
      '[build-system]',
      'requires = ["setuptools>=61"]',
      '',
      '[project]  # the package',
      'name = "x"',
      'dependencies = [',
      '    "pygls>=2.0,<3",  # the server',
      "    'requests[socks]>=2; python_version >= \"3.10\"',",
      '    # "commented-out>=1",',
      '    "plain"',
      ']',
      '',
      '[project.optional-dependencies]',
      'test = ["pytest>=8"]',
    ].join('\n');
    assert.deepEqual(projectDependencies(toml), ['pygls>=2.0,<3', 'requests[socks]>=2; python_version >= "3.10"', 'plain']);
    assert.deepEqual(projectDependencies('[tool.x]\ndependencies = ["no"]\n'), []);
  });
});

describe('the advice for an interpreter without the libraries', () => {
  const base: Probe = {
    version: [3, 14],
    executable: '/usr/bin/python3.14',
    missing: 'docx',
    requirements: ['pygls>=2.0,<3', 'python-docx>=1.1', 'openpyxl>=3.1'],
    bundled: ['3.10', '3.11'],
  };

  it('names what is missing or too old and gives the pip command for exactly that', () => {
    const problem = probeProblem({
      ...base,
      unmet: [
        { requirement: 'python-docx>=1.1', name: 'python-docx', found: null },
        { requirement: 'openpyxl>=3.1', name: 'openpyxl', found: null },
        { requirement: 'pygls>=2.0,<3', name: 'pygls', found: '1.3.1' },
      ],
    });
    assert.match(problem ?? '', /lacks python-docx and openpyxl and has pygls 1\.3\.1 \(needs pygls>=2\.0,<3\)/);
    assert.match(problem ?? '', /`\/usr\/bin\/python3\.14 -m pip install "python-docx>=1\.1" "openpyxl>=3\.1" "pygls>=2\.0,<3"`/);
    assert.match(problem ?? '', /bundles its libraries for Python 3\.10 and 3\.11/);
  });

  it('installs every requirement when an import fails all the same', () => {
    const problem = probeProblem({ ...base, unmet: [] }) ?? '';
    assert.match(problem, /cannot import docx/);
    assert.match(problem, /-m pip install "pygls>=2\.0,<3" "python-docx>=1\.1" "openpyxl>=3\.1"`/);
  });

  it('is the project’s own list, not a stale one', () => {
    const requirements = pythonRequirements(EXTENSION_ROOT);
    const problem = probeProblem({ ...base, requirements, unmet: [] }) ?? '';
    const command = /-m pip install ([^`]*)`/.exec(problem)?.[1] ?? '';
    assert.deepEqual(command.split(' ').map((word) => word.replace(/^"|"$/g, '')), requirements);
  });
});

describe('the probe, in a real interpreter', () => {
  let root: string;

  // An extension folder whose pyproject.toml adds a package nobody has and a version nobody has.
  before(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'agentread-probe-'));
    fs.symlinkSync(path.join(EXTENSION_ROOT, 'python'), path.join(root, 'python'));
    fs.symlinkSync(path.join(EXTENSION_ROOT, 'extension'), path.join(root, 'extension'));
    const pyproject = fs.readFileSync(path.join(EXTENSION_ROOT, 'pyproject.toml'), 'utf8');
    fs.writeFileSync(
      path.join(root, 'pyproject.toml'),
      pyproject.replace(/^dependencies = \[/m, 'dependencies = [\n    "agentread-no-such-package>=1",\n    "pip>=999",'),
    );
  });

  after(() => fs.rmSync(root, { recursive: true, force: true }));

  it('finds the requirements that are not met', async () => {
    const probe = await probePython(python, root);
    assert.equal(probe.missing, null);
    assert.deepEqual(
      probe.unmet?.map((item) => [item.name, item.found === null]),
      [['agentread-no-such-package', true], ['pip', false]],
    );
    const problem = probeProblem(probe) ?? '';
    assert.match(problem, /lacks agentread-no-such-package and has pip [\d.]+ \(needs pip>=999\)/);
    assert.match(problem, /-m pip install "agentread-no-such-package>=1" "pip>=999"`/);
  });
});
