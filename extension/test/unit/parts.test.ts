// The parts of a tool result as VS Code's chat agent joins them: text parts concatenated with nothing between
// them, an image replaced by a note of the host's own (a model without image input) or by the image. What the
// model reads must be the server's lines, each whole.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { toParts, type PartFactory } from '../../src/convert';
import { forwardRead, forwardReadMany } from '../../src/protocol';
import { makeFixtures, textLine, type Fixtures } from '../fixtures';
import { startServer, type Server } from './harness';

/** What the chat puts in an image's place for a model without image input. */
const HOST_NOTE = '[Image content is not available because vision is not supported by the current model.]';

/** The chat's join: text parts as they are, images as the host's note, nothing in between. */
function joinedByHost(parts: string[]): string {
  return parts.join('');
}

const withImages: PartFactory<string> = { text: (value) => value, image: () => HOST_NOTE };
const withoutDataParts: PartFactory<string> = { text: (value) => value };

describe('the parts of a result, joined as the chat joins them', () => {
  let fixtures: Fixtures;
  let server: Server;

  before(async () => {
    fixtures = makeFixtures();
    server = await startServer(fixtures.workspace);
  });

  after(async () => {
    await server?.stop();
    fs.rmSync(path.dirname(fixtures.workspace), { recursive: true, force: true });
  });

  it('keeps each header of a read of many files on a line of its own, and every numbered line whole', async () => {
    const result = await forwardReadMany(server.send, { paths: ['lines.txt', 'analysis.ipynb', '.env'] }, []);
    for (const factory of [withImages, withoutDataParts]) {
      const lines = joinedByHost(toParts(result, factory)).split('\n');
      // A file's header names its version, but a file not read (an error) has none.
      const headers = lines.filter((line) => line.includes('==>')).map((line) => line.replace(/ \[version [0-9a-f]{16}\]$/, ''));
      assert.deepEqual(headers, ['==> lines.txt <==', '==> analysis.ipynb <==', '==> .env <==']);
      const first = lines.findIndex((line) => line.startsWith('==> lines.txt <=='));
      assert.equal(lines[first + 1], `     1\t${textLine(1)}`);
      assert.ok(lines.some((line) => line.startsWith('Error: ')), 'the refused file\'s error starts a line');
      const note = lines.filter((line) => line.includes('[Image content') || line.includes('not attached'));
      assert.equal(note.length, 1, lines.join('\n'));
      assert.ok(note[0] === HOST_NOTE || /^\[image: image\/png \d+x\d+, not attached: /.test(note[0]), note[0]);
    }
  });

  it('puts the text after a notebook\'s image on a line of its own', async () => {
    const result = await forwardRead(server.send, { path: fixtures.notebook }, false);
    const parts = toParts(result, withImages);
    const index = parts.indexOf(HOST_NOTE);
    assert.ok(index > 0, 'the plot is an image part');
    const lines = joinedByHost(parts).split('\n');
    assert.ok(lines.includes(HOST_NOTE), 'the host\'s note stands alone');
    assert.ok(lines.some((line) => /^\[image 1: output 1, image\/png \d+x\d+, attached\]$/.test(line)), lines.join('\n'));
  });
});
