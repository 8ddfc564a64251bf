// What the user's answers to agentread's own question allow, and for what: a file, or a folder's files, each for
// the reasons the user was told; never a file of another folder or with a reason the user was not asked about.

import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { declinedText, grantQuestion, type ConsentCheck } from '../../src/consent';
import { ConsentGrants, folderOf } from '../../src/grants';

const home = path.join(path.sep, 'home', 'user');
const outside = (file: string): ConsentCheck => ({ path: file, resolvedPath: file, outsideWorkspace: true });
const sensitive = (file: string, outsideWorkspace = false): ConsentCheck => ({
  path: path.basename(file),
  resolvedPath: file,
  outsideWorkspace,
  sensitivePattern: '.env',
});

describe('consent grants', () => {
  const notes = outside(path.join(home, 'notes', 'a.txt'));
  const sibling = outside(path.join(home, 'notes', 'sub', 'b.txt'));
  const other = outside(path.join(home, 'other', 'c.txt'));
  const lookalike = outside(path.join(home, 'notes-old', 'd.txt'));
  const envOutside = sensitive(path.join(home, 'notes', '.env'), true);

  it('allows nothing until the user answers, and nothing after a denial', () => {
    const grants = new ConsentGrants();
    assert.equal(grants.covers(notes), false);
    grants.record('deny', [notes]);
    assert.deepEqual(grants.uncovered([notes, other]), [notes, other]);
  });

  it('allows a file: that file again, no other', () => {
    const grants = new ConsentGrants();
    grants.record('file', [notes]);
    assert.equal(grants.covers(notes), true);
    assert.equal(grants.covers(sibling), false);
    assert.equal(grants.covers(other), false);
  });

  it('allows a folder: the files under it, at any depth, and no folder whose name merely starts the same', () => {
    const grants = new ConsentGrants();
    grants.record('folder', [notes]);
    assert.equal(grants.covers(sibling), true);
    assert.equal(grants.covers(lookalike), false);
    assert.equal(grants.covers(other), false);
  });

  it('allows only the reasons the user was told: a sensitive file in an allowed folder is asked again', () => {
    const grants = new ConsentGrants();
    grants.record('folder', [notes]);
    assert.deepEqual(grants.uncovered([envOutside]), [envOutside]);
    grants.record('file', [envOutside]);
    assert.equal(grants.covers(envOutside), true);
    const inside = sensitive(path.join(home, 'project', '.env'));
    assert.equal(grants.covers(inside), false);
  });

  it('a sensitive file allowed inside the workspace is asked again once it reads from outside', () => {
    const grants = new ConsentGrants();
    const env = sensitive(path.join(home, 'project', '.env'));
    grants.record('file', [env]);
    assert.equal(grants.covers(env), true);
    assert.equal(grants.covers({ ...env, outsideWorkspace: true }), false);
  });

  it('forgets every grant when cleared', () => {
    const grants = new ConsentGrants();
    grants.record('folder', [notes, envOutside]);
    grants.clear();
    assert.deepEqual(grants.uncovered([notes, envOutside]), [notes, envOutside]);
  });
});

describe('agentread\'s question and the model\'s answer', () => {
  it('names each file, why it is asked, and what each answer allows for how long', () => {
    const env = sensitive(path.join(home, 'project', '.env'));
    const question = grantQuestion([env], folderOf);
    assert.equal(question.message, `Send ${env.resolvedPath} to the language model?`);
    assert.ok(question.detail.includes(`${env.resolvedPath} (matches ".env"`), question.detail);
    assert.ok(question.detail.includes(`every file under ${path.join(home, 'project')} that is sensitive`), question.detail);
    assert.match(question.detail, /until this window is closed or reloaded/);
    const many = grantQuestion([outside(path.join(home, 'a', 'x.txt')), outside(path.join(home, 'b', 'y.txt'))], folderOf);
    assert.equal(many.allowFile, 'Allow These Files');
    assert.ok(many.detail.includes(`${path.join(home, 'a')}, ${path.join(home, 'b')}`), many.detail);
  });

  it('tells the model the user declined, and not to reach the file another way', () => {
    const text = declinedText([sensitive(path.join(home, 'project', '.env'))]);
    assert.match(text, /^The user declined to let you read \.env \(matches "\.env"/);
    assert.match(text, /: it was not read\. Do not try to reach this file another way/);
    const two = declinedText([sensitive(path.join(home, 'project', '.env')), outside(path.join(home, 'a.txt'))]);
    assert.match(two, /\(outside the workspace\): they were not read\. Do not try to reach these files another way/);
  });
});
