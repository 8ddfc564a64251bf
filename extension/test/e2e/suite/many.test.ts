// The read-many tool and the unchanged-read stub setting inside a real VS Code, with the .vsix installed.

import assert from 'node:assert/strict';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AgentreadApi } from '../../../src/extension';
import { activated, HANG_GUARD_MS, textOf, waitFor } from './helpers';

const MANY_TOOL = 'agentread_read_many';

describe('agentread reads many files, and stubs unchanged re-reads, in VS Code', () => {
  let api: AgentreadApi;

  before(async () => {
    api = await activated();
  });

  it('registers the read-many tool with the schema of its package.json entry', () => {
    const tool = vscode.lm.tools.find((candidate) => candidate.name === MANY_TOOL);
    assert.ok(tool, `${MANY_TOOL} among ${vscode.lm.tools.map((each) => each.name).join(', ')}`);
    const schema = tool.inputSchema as { required?: string[] };
    assert.deepEqual(schema.required, ['paths']);
  });

  it('reads files and a glob in one call, and lists each file in the Agent reads view', async () => {
    const input = { paths: ['lines.txt', '*.ipynb'] };
    const result = await vscode.lm.invokeTool(MANY_TOOL, { input, toolInvocationToken: undefined }, new vscode.CancellationTokenSource().token);
    const text = textOf(result);
    assert.match(text, /==> lines\.txt <==/);
    assert.match(text, /==> analysis\.ipynb <==/);
    assert.match(text, /^     1\tline 1: /m);
    const files = api.reads.all.slice(0, 3).map((entry) => path.basename(entry.file));
    assert.ok(files.includes('lines.txt') && files.includes('analysis.ipynb'), files.join(', '));
  });

  it('asks before reading listed files outside the workspace, not for globs or workspace files', async () => {
    const token = new vscode.CancellationTokenSource().token;
    const prepare = (paths: string[]) => api.manyTool.prepareInvocation({ input: { paths } }, token);
    const asked = await prepare(['lines.txt', '../outside/notes.txt', '*.md']);
    assert.ok(asked.confirmationMessages);
    assert.match(asked.confirmationMessages.title, /outside the workspace/);
    assert.equal((await prepare(['lines.txt', '**/*.txt'])).confirmationMessages, undefined);
  });

  it('reads a listed file outside the workspace only once the user allowed it in agentread\'s own question', async () => {
    const input = { paths: ['../outside/notes.txt', 'lines.txt'] };
    // invokeTool goes through prepareInvocation, and the extension-test dialog service confirms; agentread's
    // own question cannot be shown in a test run of the workbench, which is a denial.
    const token = new vscode.CancellationTokenSource().token;
    for (const result of [
      await vscode.lm.invokeTool(MANY_TOOL, { input, toolInvocationToken: undefined }, token),
      await api.manyTool.invoke({ input, toolInvocationToken: undefined }, token),
    ]) {
      // That file is refused in its place, the model told the user declined it, the other still read.
      assert.doesNotMatch(textOf(result), /a note kept outside/);
      assert.match(textOf(result), /^\[The user declined to let you read \.\.\/outside\/notes\.txt/);
      assert.match(textOf(result), /Error: .*outside the workspace/);
      assert.match(textOf(result), /^     1\tline 1: /m);
    }
  });

  it('answers a re-read of an unchanged file with one line once the setting is on, after a restart', async () => {
    const config = vscode.workspace.getConfiguration('agentread');
    const before = api.server.pid;
    await config.update('unchangedReadStub', true, vscode.ConfigurationTarget.Global);
    try {
      await waitFor('the server to restart', () => api.server.state === 'running' && api.server.pid !== before, HANG_GUARD_MS);
      const first = await api.read({ path: 'lines.txt', limit: 30 });
      const again = await api.read({ path: 'lines.txt', limit: 30 });
      assert.equal(first.unchanged, undefined);
      assert.equal(again.unchanged, true);
      assert.equal(again.content.length, 1);
    } finally {
      const on = api.server.pid;
      await config.update('unchangedReadStub', undefined, vscode.ConfigurationTarget.Global);
      await waitFor('the server to restart', () => api.server.state === 'running' && api.server.pid !== on, HANG_GUARD_MS);
    }
    const first = await api.read({ path: 'lines.txt', limit: 30 });
    const again = await api.read({ path: 'lines.txt', limit: 30 });
    assert.equal(again.unchanged, undefined);
    assert.deepEqual(again.content, first.content);
  });
});
