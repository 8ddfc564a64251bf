// When the tool asks the user before reading: the server's answer to `agentread/check`, and the question.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { checkConsent, consentQuestion, consentQuestionMany, HARD_LINK, type ConsentCheck } from '../../src/consent';
import { startServer, type Server } from './harness';

describe('checkConsent, as the real server decides', () => {
  let root: string;
  let workspace: string;
  let server: Server;
  const patterns = ['.env', '*.pem', 'secrets/*'];
  const check = async (requested: string): Promise<ConsentCheck | undefined> =>
    (await checkConsent(server.send, [requested]))[0];

  before(async () => {
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'agentread-consent-')));
    workspace = path.join(root, 'ws');
    fs.mkdirSync(path.join(workspace, 'secrets'), { recursive: true });
    fs.writeFileSync(path.join(workspace, 'a.txt'), 'a');
    fs.writeFileSync(path.join(workspace, '.env'), 'X=1');
    fs.writeFileSync(path.join(workspace, 'secrets', 'token.txt'), 't');
    fs.writeFileSync(path.join(workspace, 'odd[1].txt'), 'x');
    fs.writeFileSync(path.join(workspace, 'twin.txt'), 'w');
    fs.linkSync(path.join(workspace, 'twin.txt'), path.join(root, 'twin-outside.txt'));
    fs.writeFileSync(path.join(root, 'outside.txt'), 'o');
    fs.symlinkSync(path.join(root, 'outside.txt'), path.join(workspace, 'escape.txt'));
    server = await startServer(workspace, patterns);
  });

  after(async () => {
    await server?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('reads workspace files without asking', async () => {
    for (const requested of ['a.txt', path.join(workspace, 'a.txt'), 'missing.txt', 'secrets']) {
      assert.equal(await check(requested), undefined, requested);
    }
  });

  it('asks for files outside the workspace, symbolic links followed', async () => {
    for (const requested of [path.join(root, 'outside.txt'), '../outside.txt', 'escape.txt', '/etc/hostname']) {
      assert.equal((await check(requested))?.outsideWorkspace, true, requested);
    }
    assert.equal((await check('escape.txt'))?.resolvedPath, path.join(root, 'outside.txt'));
  });

  it('asks for sensitive files, by name or workspace-relative path, naming the pattern', async () => {
    assert.equal((await check('.env'))?.sensitivePattern, '.env');
    assert.equal((await check('secrets/token.txt'))?.sensitivePattern, 'secrets/*');
  });

  it('asks for a file with other hard links, saying so rather than naming a pattern', async () => {
    const twin = (await check('twin.txt'))!;
    assert.equal(twin.sensitivePattern, HARD_LINK);
    const question = consentQuestion(twin);
    assert.match(question.message, /is a hard link/);
    assert.doesNotMatch(question.message, /agentread\.sensitiveFiles/);
  });

  it('asks nothing for globs, which the server expands inside the workspace only', async () => {
    assert.deepEqual(await checkConsent(server.send, ['src/**/*.py', 'odd[12].txt', '*.env']), []);
    assert.equal(await check('odd[1].txt'), undefined); // a file of that name: a path, inside
  });

  it('says what is asked and why', async () => {
    const outside = consentQuestion((await check(path.join(root, 'outside.txt')))!);
    assert.match(outside.title, /outside the workspace/);
    assert.ok(outside.message.includes(path.join(root, 'outside.txt')));
    const sensitive = consentQuestion((await check('.env'))!);
    assert.match(sensitive.title, /sensitive/);
    assert.match(sensitive.message, /agentread\.sensitiveFiles/);
  });

  it('asks once about the files of one call that need it, naming each and why', async () => {
    const checks = await checkConsent(server.send, [path.join(root, 'outside.txt'), 'a.txt', '.env']);
    assert.deepEqual(checks.map((each) => each.path), [path.join(root, 'outside.txt'), '.env']);
    const question = consentQuestionMany(checks);
    assert.match(question.title, /2 files/);
    assert.ok(question.message.includes(`\`${path.join(root, 'outside.txt')}\`: outside the workspace`), question.message);
    assert.ok(question.message.includes(`\`${path.join(workspace, '.env')}\`: matches \`.env\``), question.message);
    assert.deepEqual(consentQuestionMany(checks.slice(1)), consentQuestion(checks[1]));
  });
});
