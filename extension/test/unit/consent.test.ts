// When the tool asks the user before reading.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { checkConsent, consentQuestion, consentQuestionMany, globToRegExp, isGlob, needsConsent } from '../../src/consent';

describe('globToRegExp (Python fnmatch semantics)', () => {
  const cases: Array<[string, string, boolean]> = [
    ['.env', '.env', true],
    ['.env', 'x.env', false],
    ['.env.*', '.env.local', true],
    ['*.pem', 'server.pem', true],
    ['*.pem', 'keys/server.pem', true], // `*` crosses `/`, as in fnmatch
    ['id_rsa', 'id_rsa.pub', false],
    ['id_rsa.*', 'id_rsa.pub', true],
    ['.ssh/*', '.ssh/config', true],
    ['file?.txt', 'file1.txt', true],
    ['[!a]bc', 'xbc', true],
    ['[!a]bc', 'abc', false],
    ['[ab]c', 'bc', true],
    ['a+b(c)', 'a+b(c)', true],
  ];
  for (const [glob, name, expected] of cases) {
    it(`${glob} ${expected ? 'matches' : 'does not match'} ${name}`, () => {
      assert.equal(globToRegExp(glob).test(name), expected);
    });
  }
});

describe('checkConsent', () => {
  let root: string;
  let workspace: string;
  const patterns = ['.env', '*.pem', 'secrets/*'];

  before(() => {
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'agentread-consent-')));
    workspace = path.join(root, 'ws');
    fs.mkdirSync(path.join(workspace, 'secrets'), { recursive: true });
    fs.writeFileSync(path.join(workspace, 'a.txt'), 'a');
    fs.writeFileSync(path.join(workspace, '.env'), 'X=1');
    fs.writeFileSync(path.join(workspace, 'secrets', 'token.txt'), 't');
    fs.writeFileSync(path.join(root, 'outside.txt'), 'o');
    fs.symlinkSync(path.join(root, 'outside.txt'), path.join(workspace, 'escape.txt'));
  });

  after(() => fs.rmSync(root, { recursive: true, force: true }));

  it('reads workspace files without asking', () => {
    assert.equal(needsConsent(checkConsent('a.txt', [workspace], patterns)), false);
    assert.equal(needsConsent(checkConsent(path.join(workspace, 'a.txt'), [workspace], patterns)), false);
    assert.equal(needsConsent(checkConsent('missing.txt', [workspace], patterns)), false);
  });

  it('asks for files outside the workspace, symbolic links followed', () => {
    for (const requested of [path.join(root, 'outside.txt'), '../outside.txt', 'escape.txt', '/etc/hostname']) {
      const check = checkConsent(requested, [workspace], patterns);
      assert.equal(check.outsideWorkspace, true, requested);
    }
    assert.equal(checkConsent('escape.txt', [workspace], patterns).resolvedPath, path.join(root, 'outside.txt'));
  });

  it('asks for sensitive files, by name or workspace-relative path', () => {
    assert.equal(checkConsent('.env', [workspace], patterns).sensitivePattern, '.env');
    assert.equal(checkConsent('secrets/token.txt', [workspace], patterns).sensitivePattern, 'secrets/*');
    assert.equal(checkConsent('secrets', [workspace], patterns).sensitivePattern, undefined); // a directory
  });

  it('treats everything as outside when no folder is open', () => {
    assert.equal(checkConsent(path.join(workspace, 'a.txt'), [], patterns).outsideWorkspace, true);
  });

  it('says what is asked and why', () => {
    const outside = consentQuestion(checkConsent(path.join(root, 'outside.txt'), [workspace], patterns));
    assert.match(outside.title, /outside the workspace/);
    assert.ok(outside.message.includes(path.join(root, 'outside.txt')));
    const sensitive = consentQuestion(checkConsent('.env', [workspace], patterns));
    assert.match(sensitive.title, /sensitive/);
    assert.match(sensitive.message, /agentread\.sensitiveFiles/);
  });

  it('tells globs from paths as the server does: a wildcard, and no file of that name', () => {
    assert.equal(isGlob('src/**/*.py', [workspace]), true);
    assert.equal(isGlob('a.txt', [workspace]), false);
    fs.writeFileSync(path.join(workspace, 'odd[1].txt'), 'x');
    assert.equal(isGlob('odd[1].txt', [workspace]), false);
    assert.equal(isGlob('odd[12].txt', [workspace]), true);
  });

  it('asks once about the files of one call that need it, naming each and why', () => {
    const checks = [path.join(root, 'outside.txt'), '.env'].map((file) => checkConsent(file, [workspace], patterns));
    const question = consentQuestionMany(checks);
    assert.match(question.title, /2 files/);
    assert.ok(question.message.includes(`\`${path.join(root, 'outside.txt')}\`: outside the workspace`), question.message);
    assert.ok(question.message.includes(`\`${path.join(workspace, '.env')}\`: matches \`.env\``), question.message);
    assert.deepEqual(consentQuestionMany(checks.slice(1)), consentQuestion(checks[1]));
  });
});
