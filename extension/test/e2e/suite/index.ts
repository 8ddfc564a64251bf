// The entry VS Code loads as `extensionTestsPath`: runs the mocha suite inside the extension host and writes
// a summary next to the test workspace for the driver (run.mjs) to print.

import * as fs from 'node:fs';
import * as path from 'node:path';
import Mocha from 'mocha';
import * as vscode from 'vscode';

/** Where the driver looks for the summary: beside the workspace folder. */
export function resultsFile(): string {
  const workspace = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? process.cwd();
  return path.join(path.dirname(workspace), 'e2e-results.json');
}

export function run(): Promise<void> {
  // AGENTREAD_E2E_GREP runs only the tests whose full title matches (code-server passes its environment on).
  const grep = process.env.AGENTREAD_E2E_GREP;
  const mocha = new Mocha({ ui: 'bdd', timeout: 60_000, color: false, ...(grep ? { grep } : {}) });
  mocha.addFile(path.join(__dirname, 'notebook-live.test.js'));
  mocha.addFile(path.join(__dirname, 'many.test.js'));
  // Last: its final test signals the driver to take the screenshot.
  mocha.addFile(path.join(__dirname, 'agentread.test.js'));
  const results: Array<{ title: string; state: string; error?: string; ms?: number }> = [];
  return new Promise((resolve, reject) => {
    const runner = mocha.run((failures) => {
      fs.writeFileSync(resultsFile(), JSON.stringify({ failures, results }, null, 2));
      if (failures > 0) {
        reject(new Error(`${failures} integration test(s) failed`));
      } else {
        resolve();
      }
    });
    runner.on('pass', (test) => results.push({ title: test.fullTitle(), state: 'passed', ms: test.duration }));
    runner.on('fail', (test, error: Error) =>
      results.push({ title: test.fullTitle(), state: 'failed', error: String(error?.stack ?? error) }),
    );
    runner.on('pending', (test) => results.push({ title: test.fullTitle(), state: 'skipped' }));
  });
}
