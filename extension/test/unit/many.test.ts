// What the read-many tool and the unchanged-read stub send, answered by the real server: `agentread/readMany`
// with files, globs and windows, a reply cut and continued, consent by path; initializationOptions'
// `unchangedStub`.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { agentText, resultSize } from '../../src/convert';
import { describeResult, forwardRead, forwardReadMany, type ManyEntry, type ReadManyInput, type ReadManyResult } from '../../src/protocol';
import { makeFixtures, TEXT_LINES, textLine, type Fixtures } from '../fixtures';
import { startServer, type Server } from './harness';

/** Lines in big.txt: more than one reply holds (2000 lines), so a reply with it is cut. */
const BIG_LINES = 3000;

describe('a read of many files, by the real server', () => {
  let fixtures: Fixtures;
  let server: Server;

  before(async () => {
    fixtures = makeFixtures();
    fs.mkdirSync(path.join(fixtures.workspace, 'src'));
    fs.writeFileSync(path.join(fixtures.workspace, 'src', 'a.py'), 'A = 1\n');
    fs.writeFileSync(path.join(fixtures.workspace, 'src', 'b.py'), 'B = 2\n');
    const big = Array.from({ length: BIG_LINES }, (_, i) => `big ${i + 1}`).join('\n') + '\n';
    fs.writeFileSync(path.join(fixtures.workspace, 'big.txt'), big);
    server = await startServer(fixtures.workspace);
  });

  after(async () => {
    await server?.stop();
    fs.rmSync(path.dirname(fixtures.workspace), { recursive: true, force: true });
  });

  it('reads files and globs into one reply, a header per file, in order', async () => {
    const result = await forwardReadMany(server.send, { paths: ['lines.txt', 'src/*.py'] }, []);
    assert.equal(result.isError, false, agentText(result));
    const text = agentText(result);
    const headers = ['==> lines.txt <==', '==> src/a.py <==', '==> src/b.py <=='].map((header) => text.indexOf(header));
    assert.ok(headers.every((at, i) => at >= 0 && (i === 0 || at > headers[i - 1])), text.slice(0, 300));
    assert.match(text, new RegExp(`^\\s+${TEXT_LINES}\\t${textLine(TEXT_LINES)}$`, 'm'));
    assert.match(text, /^\s+1\tB = 2$/m);
    assert.equal(result.truncated, false);
  });

  it('forwards find to one file and to every file listed, and names the hits', async () => {
    const one = await forwardRead(server.send, { path: 'src/b.py', find: 'b = ', ignoreCase: true }, false);
    assert.equal(one.isError, false, agentText(one));
    assert.deepEqual(one.shown?.hits, [{ line: 1, column: 1, read: { offset: 1, limit: 1 } }]);
    assert.equal(describeResult(one, { path: 'src/b.py', find: 'b = ' }), '1 hit of "b = "');
    const many = await forwardReadMany(server.send, { paths: ['src/*.py'], find: '= \\d', regex: true }, []);
    assert.deepEqual(many.files?.map((file) => file.shown?.hits?.length), [1, 1], agentText(many));
    assert.match(agentText(many), /^line 1, column 3: A = 1 {2}\[read: offset=1, limit=1\]$/m);
  });

  it('reads a window of a file given as an object', async () => {
    const result = await forwardReadMany(server.send, { paths: [{ path: 'lines.txt', offset: 40, limit: 2 }, 'src/a.py'] }, []);
    const text = agentText(result);
    assert.match(text, /^\s+40\tline 40: /m);
    assert.doesNotMatch(text, /^\s+42\t/m);
    assert.match(text, /A = 1/);
  });

  it('gives each file its version, and answers each entry\'s `since`: one line, or the diff', async () => {
    fs.writeFileSync(path.join(fixtures.workspace, 'v1.txt'), 'one\ntwo\nthree\n');
    fs.writeFileSync(path.join(fixtures.workspace, 'v2.txt'), 'same\n');
    const first = await forwardReadMany(server.send, { paths: ['v1.txt', 'v2.txt'] }, []);
    const [v1, v2] = (first.files ?? []).map((file) => file.version ?? '');
    assert.match(agentText(first), new RegExp(`^==> v1\\.txt <== \\[version ${v1}\\]\n(.*\n){3}==> v2\\.txt <== \\[version ${v2}\\]\n\\s+1\tsame\n`));
    fs.writeFileSync(path.join(fixtures.workspace, 'v1.txt'), 'one\nTWO\nthree\n');
    const again = await forwardReadMany(server.send, { paths: [{ path: 'v1.txt', since: v1 }, { path: 'v2.txt', since: v2 }] }, []);
    const [changed, unchanged] = again.files ?? [];
    assert.equal(changed.diff, true, agentText(again));
    assert.equal(unchanged.unchanged, true);
    assert.match(agentText(again), /^-two\n\+TWO$/m);
    assert.match(agentText(again), /==> v2\.txt <==\n\[Unchanged: [^\n]*\]\n\[2 files:/);
  });

  it('cuts a reply over the budget and continues it with `next`, showing every line once', async () => {
    let paths: ManyEntry[] | undefined = ['big.txt', 'lines.txt'];
    const seen = new Map<number, number>();
    for (let call = 0; paths && call < 5; call++) {
      const result = await forwardReadMany(server.send, { paths }, []);
      for (const match of agentText(result).matchAll(/^\s+\d+\tbig (\d+)$/gm)) {
        seen.set(Number(match[1]), (seen.get(Number(match[1])) ?? 0) + 1);
      }
      assert.equal(result.truncated, result.next !== undefined);
      paths = result.next?.paths;
    }
    assert.equal(paths, undefined, 'the reads ended');
    assert.equal(seen.size, BIG_LINES);
    assert.ok([...seen.values()].every((count) => count === 1));
  });

  it('searches more files than a call shows: `next`, passed back as the input, reaches every hit once', async () => {
    // The hits are in the last files of the sorted walk, past the 100 a call shows; `next` resumes the glob
    // with `after`, which must reach the server;
    // at the least reply size, a few files' hits a call.
    const files = 230;
    const HIT_FILES = 12;
    fs.mkdirSync(path.join(fixtures.workspace, 'tree'));
    for (let i = 0; i < files; i++) {
      const hit = i >= files - HIT_FILES ? '    def visit_title(self):\n        pass\n' : '';
      fs.writeFileSync(path.join(fixtures.workspace, 'tree', `m${String(i).padStart(3, '0')}.py`), `class M${i}:\n${hit}    x = ${i}\n`);
    }
    let input: ReadManyInput | undefined = { paths: ['tree/*.py'], find: 'def visit_title' };
    const hits: string[] = [];
    let calls = 0;
    for (; input && calls <= HIT_FILES; calls++) {
      const result: ReadManyResult = await forwardReadMany(server.send, input, [], undefined, 1400);
      assert.equal(result.isError, false, agentText(result));
      assert.doesNotMatch(agentText(result), /No hit/);
      for (const file of result.files ?? []) {
        hits.push(...(file.shown?.hits ?? []).map((hit) => `${file.path}:${hit.line}`));
      }
      input = result.next;
    }
    assert.equal(input, undefined, 'the search ended');
    assert.deepEqual(hits, Array.from({ length: HIT_FILES }, (_, k) => `tree/m${files - HIT_FILES + k}.py:2`));
  });

  it('reads a file outside the workspace only with the approval of its path, the others regardless', async () => {
    const refused = await forwardReadMany(server.send, { paths: [fixtures.outside, 'src/a.py'] }, []);
    assert.match(agentText(refused), /Error: .*outside the workspace/);
    assert.doesNotMatch(agentText(refused), /a note kept outside/);
    assert.match(agentText(refused), /A = 1/);
    const approved = await forwardReadMany(server.send, { paths: [fixtures.outside, 'src/a.py'] }, [fixtures.outside]);
    assert.match(agentText(approved), /a note kept outside the workspace/);
    // The approval is of that path: another file outside is still refused.
    const other = path.join(fixtures.outsideDir, 'other.txt');
    fs.writeFileSync(other, 'another note\n');
    const partly = await forwardReadMany(server.send, { paths: [fixtures.outside, other] }, [fixtures.outside]);
    assert.match(agentText(partly), /a note kept outside/);
    assert.doesNotMatch(agentText(partly), /another note/);
  });

  it('answers malformed paths with -32602', async () => {
    await assert.rejects(forwardReadMany(server.send, { paths: [] }, []), (error: { code?: number }) => error.code === -32602);
  });
});

describe('the unchanged-read stub, by the real server', () => {
  let fixtures: Fixtures;

  before(() => {
    fixtures = makeFixtures();
  });

  after(() => fs.rmSync(path.dirname(fixtures.workspace), { recursive: true, force: true }));

  it('answers a re-read of an unchanged file with one short line when it is on, and in full once it changed', async () => {
    const server = await startServer(fixtures.workspace, undefined, { unchangedReadStub: true });
    try {
      const first = await forwardRead(server.send, { path: 'lines.txt' }, false);
      const again = await forwardRead(server.send, { path: 'lines.txt' }, false);
      assert.equal(first.unchanged, undefined);
      assert.equal(again.unchanged, true);
      assert.equal(again.isError, false);
      assert.equal(agentText(again).split('\n').length, 1, agentText(again));
      assert.ok(resultSize(again) < resultSize(first) / 10);
      fs.appendFileSync(fixtures.text, 'one more line\n');
      const changed = await forwardRead(server.send, { path: 'lines.txt' }, false);
      assert.equal(changed.unchanged, undefined);
      assert.match(agentText(changed), /one more line/);
    } finally {
      await server.stop();
    }
  });

  it('answers every read in full when it is off', async () => {
    const server = await startServer(fixtures.workspace);
    try {
      const first = await forwardRead(server.send, { path: 'lines.txt' }, false);
      const again = await forwardRead(server.send, { path: 'lines.txt' }, false);
      assert.equal(again.unchanged, undefined);
      assert.equal(agentText(again), agentText(first));
    } finally {
      await server.stop();
    }
  });
});
