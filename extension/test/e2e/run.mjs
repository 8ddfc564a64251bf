// End-to-end run in a real VS Code: builds the .vsix users install (`npm run package`, no arguments: every
// Python version it supports), installs it into code-server, opens code-server in headless Chromium with the
// integration suite as extensionTestsPath, and checks a screenshot of the editor.
//
//   npm run test:e2e
//
// Environment: AGENTREAD_E2E_CACHE (default .vscode-test: code-server, screenshots), AGENTREAD_E2E_VSIX (test
// this .vsix, built before, instead of packaging one), CHROMIUM (default /usr/bin/chromium), AGENTREAD_PYTHON
// (the Python that packages, default python3), AGENTREAD_E2E_GREP (run only the tests whose title matches; the
// screenshot check then fails, as its test did not run), AGENTREAD_E2E_TRACE (log the LSP traffic in the
// agentread log under user-data/logs), AGENTREAD_E2E_KEEP (keep the temporary workspace and user data).

import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { vsixPath } from '../../scripts/package.mjs';
import { freePort, launchChromium, serveArgs, startCodeServer, writeUserSettings } from '../codeServer.mjs';
import { decodePng, imageStats } from './png.mjs';

const require = createRequire(import.meta.url);
const root = fileURLToPath(new URL('../../..', import.meta.url));
const here = path.join(root, 'extension', 'test', 'e2e');
const cache = path.resolve(process.env.AGENTREAD_E2E_CACHE || path.join(root, '.vscode-test'));
const CODE_SERVER_VERSION = '4.100.3';
/** The whole suite must finish within this; a hang fails the run instead of blocking CI. */
const SUITE_TIMEOUT_MS = 5 * 60_000;

const started = Date.now();
function step(message) {
  console.log(`[e2e ${((Date.now() - started) / 1000).toFixed(1)}s] ${message}`);
}

function run(command, args, options = {}) {
  execFileSync(command, args, { cwd: root, stdio: 'inherit', ...options });
}

async function main() {
  fs.mkdirSync(cache, { recursive: true });

  step('compiling the tests');
  run(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'extension/tsconfig.json']);

  let vsix = process.env.AGENTREAD_E2E_VSIX;
  if (vsix) {
    step(`testing the prebuilt ${vsix}`);
  } else {
    vsix = vsixPath();
    step(`packaging ${vsix}: npm run package`);
    run('npm', ['run', 'package']);
  }

  step(`installing code-server ${CODE_SERVER_VERSION} (cached in ${cache})`);
  run('sh', [path.join(here, 'install-code-server.sh')], {
    env: { ...process.env, AGENTREAD_E2E_CACHE: cache, CODE_SERVER_VERSION },
  });
  const codeServer = path.join(cache, `code-server-${CODE_SERVER_VERSION}`, 'node_modules', '.bin', 'code-server');

  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'agentread-e2e-'));
  const { makeFixtures } = require(path.join(root, 'extension', 'out', 'test', 'fixtures.js'));
  const fixtures = makeFixtures(work);
  const userData = path.join(work, 'user-data');
  const extensionsDir = path.join(work, 'extensions');
  writeUserSettings(userData, {
    'agentread.trace.server': process.env.AGENTREAD_E2E_TRACE ? 'verbose' : 'off',
  });
  const common = ['--user-data-dir', userData, '--extensions-dir', extensionsDir];

  step('installing the .vsix');
  run(codeServer, [...common, '--install-extension', vsix]);
  const installed = fs.readdirSync(extensionsDir).find((name) => name.startsWith('agentread.agentread-'));
  if (!installed) {
    throw new Error(`the .vsix did not install into ${extensionsDir}`);
  }
  const extensionPath = path.join(extensionsDir, installed);

  const port = await freePort();
  step(`starting code-server on port ${port}`);
  const server = await startCodeServer(codeServer, [
    ...common,
    ...serveArgs(port),
  ], { cwd: root });

  let browser;
  try {
    browser = await launchChromium();
    const page = await browser.newPage({ viewport: { width: 1600, height: 900 } });
    const consoleLog = [];
    page.on('console', (message) => message.type() === 'error' && consoleLog.push(`[page error] ${message.text()}`));
    let finish;
    const exitCode = new Promise((resolve) => (finish = resolve));
    await page.exposeFunction('codeAutomationExit', (code) => finish(code));
    await page.exposeFunction('codeAutomationLog', (type, args) => consoleLog.push(`[ext ${type}] ${args}`));

    const remote = (file) => `vscode-remote://127.0.0.1:${port}${file}`;
    const payload = [
      ['extensionDevelopmentPath', remote(extensionPath)],
      ['extensionTestsPath', remote(path.join(root, 'extension', 'out', 'test', 'e2e', 'suite', 'index.js'))],
      ['skipWelcome', 'true'],
    ];
    const url =
      `http://127.0.0.1:${port}/?folder=${encodeURIComponent(fixtures.workspace)}` +
      `&payload=${encodeURIComponent(JSON.stringify(payload))}`;
    step('running the integration suite in code-server');
    await page.goto(url);
    // The last test writes screenshot.ready beside the workspace and waits for screenshot.taken.
    const screenshots = path.join(cache, 'screenshots');
    fs.mkdirSync(screenshots, { recursive: true });
    const shot = path.join(screenshots, 'editor.png');
    let shotTaken = false;
    const watcher = setInterval(async () => {
      if (!shotTaken && fs.existsSync(path.join(work, 'screenshot.ready'))) {
        shotTaken = true;
        try {
          await page.screenshot({ path: shot });
        } catch (error) {
          consoleLog.push(`[runner] the editor screenshot failed: ${error}`);
        }
        fs.writeFileSync(path.join(work, 'screenshot.taken'), '');
      }
    }, 200);
    // A browser that goes away ends the run at once, saying so, instead of at the suite's timeout.
    const gone = new Promise((resolve) => {
      page.on('crash', () => resolve('the page crashed'));
      page.on('close', () => resolve('the page closed'));
      browser.on('disconnected', () => resolve('the browser went away'));
    });
    const code = await Promise.race([
      exitCode,
      gone,
      new Promise((resolve) => setTimeout(() => resolve('timeout'), SUITE_TIMEOUT_MS).unref()),
    ]);
    clearInterval(watcher);
    if (!shotTaken && typeof code === 'number') {
      await page.screenshot({ path: shot });
    }
    const stats = fs.existsSync(shot) ? imageStats(decodePng(fs.readFileSync(shot))) : { variance: 0, colours: 0 };
    step(`screenshot ${shot}: luminance variance ${stats.variance.toFixed(1)}, ${stats.colours} colours`);

    const resultsPath = path.join(work, 'e2e-results.json');
    const results = fs.existsSync(resultsPath) ? JSON.parse(fs.readFileSync(resultsPath, 'utf8')) : undefined;
    for (const result of results?.results ?? []) {
      console.log(`  ${result.state === 'passed' ? 'ok  ' : result.state === 'skipped' ? 'skip' : 'FAIL'} ${result.title}`);
      if (result.error) {
        console.log(result.error.replace(/^/gm, '       '));
      }
    }
    fs.writeFileSync(path.join(cache, 'e2e-console.log'), consoleLog.join('\n'));

    const problems = [];
    if (code === 'timeout') {
      problems.push(`the suite did not finish within ${SUITE_TIMEOUT_MS / 1000} s`);
    } else if (typeof code === 'string') {
      problems.push(code);
    } else if (code !== 0) {
      problems.push(`the suite exited with ${code}`);
    }
    if (!results) {
      problems.push('the suite wrote no results');
    }
    // A blank or failed workbench is one flat colour; the editor with text, a tree and an image is not.
    if (stats.variance < 200 || stats.colours < 50) {
      problems.push(`the screenshot looks blank (variance ${stats.variance.toFixed(1)}, ${stats.colours} colours)`);
    }
    const passed = (results?.results ?? []).filter((result) => result.state === 'passed').length;
    if (problems.length) {
      console.log(`e2e: FAILED: ${problems.join('; ')} (console log in ${path.join(cache, 'e2e-console.log')})`);
      process.exitCode = 1;
    } else {
      console.log(`e2e: ${passed} passed, 0 failed, in ${((Date.now() - started) / 1000).toFixed(0)} s`);
    }
  } finally {
    step('stopping Chromium and code-server');
    await browser?.close();
    try {
      process.kill(-server.pid, 'SIGTERM');
    } catch {
      // already gone
    }
    server.stdout.destroy();
    server.stderr.destroy();
    if (!process.env.AGENTREAD_E2E_KEEP) {
      fs.rmSync(work, { recursive: true, force: true });
    }
  }
}

main().then(
  () => step('done'),
  (error) => {
    console.error(`e2e: ${error.stack ?? error}`);
    process.exit(1);
  },
);
