// The reply limit the tools pass the server, as chosen from the user's setting, the chat agent's limit and the
// model's token budget, and what the real server answers with it.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { forwardRead, forwardReadMany, toReadManyParams, toReadParams } from '../../src/protocol';
import { BYTES_PER_TOKEN, replyBytes, shrunkForTokens, textBytes } from '../../src/replySize';
import { makeFixtures, type Fixtures } from '../fixtures';
import { startServer, type Server } from './harness';

/** VS Code's chat agent passes on a tool result whose text is at most this (its default). */
const HOST_THRESHOLD = 8192;

describe('replyBytes', () => {
  it('takes the chat agent limit where there is one', () => {
    assert.equal(replyBytes({ hostThreshold: HOST_THRESHOLD }), HOST_THRESHOLD);
  });

  it('takes the smaller of the chat agent limit and what the token budget holds', () => {
    assert.equal(replyBytes({ hostThreshold: HOST_THRESHOLD, tokenBudget: 1000 }), 1000 * BYTES_PER_TOKEN);
    assert.equal(replyBytes({ hostThreshold: HOST_THRESHOLD, tokenBudget: 100_000 }), HOST_THRESHOLD);
    assert.equal(replyBytes({ tokenBudget: 2000 }), 2000 * BYTES_PER_TOKEN);
  });

  it('lets the setting override both, and 0 leave the choice to the host', () => {
    assert.equal(replyBytes({ setting: 20_000, hostThreshold: HOST_THRESHOLD, tokenBudget: 100 }), 20_000);
    assert.equal(replyBytes({ setting: 0, hostThreshold: HOST_THRESHOLD }), HOST_THRESHOLD);
  });

  it('is no limit when nothing bounds the reply', () => {
    assert.equal(replyBytes({}), undefined);
    assert.equal(replyBytes({ hostThreshold: 0, tokenBudget: Number.NaN }), undefined);
  });

  it('asks again under the token budget by the share the reply was over', () => {
    assert.equal(shrunkForTokens(8000, 4000, 2000), 3600);
  });
});

describe('the reply limit, forwarded to the real server', () => {
  let fixtures: Fixtures;
  let server: Server;

  before(async () => {
    fixtures = makeFixtures();
    const lines = Array.from({ length: 5000 }, (_, i) => `line ${i + 1} of a long module`).join('\n') + '\n';
    fs.writeFileSync(path.join(fixtures.workspace, 'long.py'), lines);
    server = await startServer(fixtures.workspace);
  });

  after(async () => {
    await server?.stop();
    fs.rmSync(path.dirname(fixtures.workspace), { recursive: true, force: true });
  });

  it('goes as maxBytes, with the model unable to set it', () => {
    const input = { path: 'a.py', maxBytes: 99 } as unknown as { path: string };
    assert.deepEqual(toReadParams(input, false, HOST_THRESHOLD), { path: 'a.py', maxBytes: HOST_THRESHOLD });
    assert.deepEqual(toReadParams(input, false), { path: 'a.py' });
    assert.deepEqual(toReadManyParams({ paths: ['a.py'] }, [], 3000), { paths: ['a.py'], maxBytes: 3000 });
  });

  it('cuts a default read of a 5,000-line file to it, with the offset that reads on', async () => {
    const result = await forwardRead(server.send, { path: 'long.py' }, false, undefined, HOST_THRESHOLD);
    assert.ok(textBytes(result.content) <= HOST_THRESHOLD, `${textBytes(result.content)} bytes`);
    assert.equal(result.startLine, 1);
    assert.deepEqual(result.next, { offset: (result.endLine ?? 0) + 1 });
    const text = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
    // The last line, which names the version first.
    assert.match(text.split('\n').at(-1) ?? '', new RegExp(`^\\[version ${result.version}\\] .*offset=${(result.endLine ?? 0) + 1} to continue\\.\\]$`));
  });

  it('cuts a read of many files to it', async () => {
    const result = await forwardReadMany(server.send, { paths: ['long.py'] }, [], undefined, 3000);
    assert.ok(textBytes(result.content) <= 3000);
    assert.ok(result.next);
  });
});
