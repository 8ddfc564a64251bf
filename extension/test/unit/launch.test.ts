// The interpreter probe and the server's environment.

import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { isSupported, probePython, probeProblem, pythonPath, serverEnv } from '../../src/launch';
import { EXTENSION_ROOT } from './harness';

describe('launch', () => {
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
    const probe = await probePython(process.env.AGENTREAD_PYTHON || 'python3', EXTENSION_ROOT);
    assert.equal(probeProblem(probe), undefined);
  });

  it('reports an interpreter that does not exist', async () => {
    await assert.rejects(probePython('/nonexistent/python', EXTENSION_ROOT), /could not be run/);
  });
});
