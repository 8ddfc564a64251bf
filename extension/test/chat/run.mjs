// End-to-end run of agentread's tools in a real chat: VS Code 1.139 (code-server 4.139.1, on Node 24) with its
// built-in chat agent, a scripted language model (scripted-model/) and the agentread .vsix users install.
// Playwright drives the chat as a user does (pick a model, type a prompt, answer a confirmation); the model
// calls one of agentread's tools and records exactly what it then receives; scenarios.mjs checks that.
//
//   npm run test:chat
//
// Environment: AGENTREAD_E2E_CACHE (default .vscode-test: Node 24, code-server, screenshots, the recordings),
// AGENTREAD_CHAT_VSIX or AGENTREAD_E2E_VSIX (test this .vsix instead of the one `npm run package` writes, which
// is reused when it is newer than every source file it is built from), CHROMIUM (default /usr/bin/chromium),
// AGENTREAD_CHAT_ONLY (comma-separated scenario names to run), AGENTREAD_CHAT_KEEP (keep the temporary
// workspace and user data).

import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { vsixPath } from '../../scripts/package.mjs';
import { freePort, launchChromium, serveArgs, startCodeServer, writeUserSettings } from '../codeServer.mjs';
import { decodePng, imageStats } from '../e2e/png.mjs';
import { makeChatFixtures } from './fixtures.mjs';
import { MODELS, PHASES, excerpt, toolResult } from './scenarios.mjs';

const require = createRequire(import.meta.url);
const root = fileURLToPath(new URL('../../..', import.meta.url));
const here = path.join(root, 'extension', 'test', 'chat');
const cache = path.resolve(process.env.AGENTREAD_E2E_CACHE || path.join(root, '.vscode-test'));
const CODE_SERVER_VERSION = '4.139.1';
const NODE_VERSION = '24.21.0';
/** The whole run must finish within this; a hang fails the run instead of blocking CI. */
const SUITE_TIMEOUT_MS = 15 * 60_000;
/** How long one scenario may take from its prompt to its recording (the first read starts agentread's server). */
const SCENARIO_TIMEOUT_MS = 3 * 60_000;
/** How long one attempt waits for a UI element (a button, a menu row) to appear; retryUi makes several. */
const UI_TIMEOUT_MS = 20_000;
/** How long the workbench may take to show the chat after the page opens. */
const WORKBENCH_TIMEOUT_MS = 120_000;

const started = Date.now();
function seconds(since = started) {
  return ((Date.now() - since) / 1000).toFixed(1);
}
function step(message) {
  console.log(`[chat ${seconds()}s] ${message}`);
}

function run(command, args, options = {}) {
  execFileSync(command, args, { cwd: root, stdio: 'inherit', ...options });
}

/** The newest modification time of the files under `entries` (files or folders), caches left out. */
function newestMtime(entries) {
  let newest = 0;
  const visit = (entry) => {
    const stat = fs.statSync(entry, { throwIfNoEntry: false });
    if (!stat) {
      return;
    }
    if (stat.isDirectory()) {
      for (const name of fs.readdirSync(entry)) {
        if (name !== '__pycache__' && name !== 'node_modules') {
          visit(path.join(entry, name));
        }
      }
    } else {
      newest = Math.max(newest, stat.mtimeMs);
    }
  };
  entries.forEach((entry) => visit(path.join(root, entry)));
  return newest;
}

/** The .vsix to test: the one named, else the packaged one when it is newer than its sources, else a new one. */
function agentreadVsix() {
  const named = process.env.AGENTREAD_CHAT_VSIX || process.env.AGENTREAD_E2E_VSIX;
  if (named) {
    step(`testing the prebuilt ${named}`);
    return named;
  }
  const vsix = vsixPath();
  const sources = ['package.json', 'pyproject.toml', 'extension/src', 'extension/scripts', 'python/agentread'];
  const built = fs.statSync(vsix, { throwIfNoEntry: false })?.mtimeMs ?? 0;
  if (built > newestMtime(sources)) {
    step(`reusing ${vsix}: it is newer than its sources (the e2e run packages it)`);
    return vsix;
  }
  step(`packaging ${vsix}: npm run package`);
  run('npm', ['run', 'package']);
  return vsix;
}

/** Starts code-server as `server`, resolving once it listens. */
function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Retries a UI lookup (never an outcome): the workbench may still be laying out, or a menu closed early. */
async function retryUi(what, action, attempts = 4) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await action();
    } catch (error) {
      if (attempt >= attempts) {
        throw new Error(`${what}: ${error.message.split('\n')[0]}`);
      }
      step(`  retrying: ${what} (${error.message.split('\n')[0]})`);
      // What the page showed, for whoever looks into a slow or flaky run.
      await page.screenshot({ path: path.join(cache, 'screenshots', 'chat-retry.png') }).catch(() => {});
      await sleepAndEscape();
    }
  }
}

let page;
let browser;
let server;
/** One entry per scenario run so far: what the report prints, also when the suite times out. */
const results = [];

/** Stops Chromium and code-server (its whole process group: the extension host and agentread's server). */
async function stopProcesses() {
  await browser?.close().catch(() => {});
  browser = undefined;
  if (server) {
    try {
      process.kill(-server.pid, 'SIGTERM');
    } catch {
      // already gone
    }
    server.stdout.destroy();
    server.stderr.destroy();
    server = undefined;
  }
}

async function sleepAndEscape() {
  await page.keyboard.press('Escape').catch(() => {});
  await sleep(1000);
}

function visible(selector) {
  return page.locator(`${selector}:visible`).first();
}

/**
 * Runs a command from the palette. The chat's commands are listed only once the chat has loaded, which can
 * take a while after the window opens: the palette is opened again until the command shows.
 */
async function runCommand(name, timeout = 2 * UI_TIMEOUT_MS) {
  const deadline = Date.now() + timeout;
  for (;;) {
    // A modal dialog (the chat's sign-in prompt in a window where chat is not set up yet) keeps F1 from working.
    if ((await page.locator('.monaco-dialog-box:visible').count()) > 0) {
      await page.keyboard.press('Escape');
      await sleep(500);
    }
    try {
      await page.keyboard.press('F1');
      // Filled, not typed: keys pressed before the box has the focus would go elsewhere.
      await visible('.quick-input-widget input').fill(`>${name}`, { timeout: UI_TIMEOUT_MS });
      await visible(`.quick-input-widget .monaco-list-row[aria-label^="${name}"]`).click({ timeout: 5000 });
      return;
    } catch (error) {
      if (Date.now() > deadline) {
        await page.screenshot({ path: path.join(cache, 'screenshots', 'chat-retry.png') }).catch(() => {});
        throw new Error(`running "${name}": ${error.message.split('\n')[0]}`);
      }
      await sleepAndEscape();
    }
  }
}

/** Waits for the chat view's input; opens the chat if the workbench did not. */
async function chatInput(timeout = UI_TIMEOUT_MS) {
  try {
    await visible('.interactive-input-part .model-picker-name').waitFor({ timeout });
  } catch {
    await runCommand('Chat: Open Chat');
    await visible('.interactive-input-part .model-picker-name').waitFor({ timeout: UI_TIMEOUT_MS });
  }
}

/** Closes the notices above the chat input (such as "Set BYOK utility models"): they cover the chat. */
async function dismissNotices() {
  const dismiss = page.locator('.interactive-input-part .chat-input-notification-dismiss:visible');
  for (let attempt = 0; attempt < 3 && (await dismiss.count()) > 0; attempt++) {
    await dismiss.first().click({ timeout: 5000 }).catch(() => {});
    await sleep(300);
  }
}

/**
 * Turns the built-in chat agent on with the scripted models. On a fresh profile it stays off (it asks for a
 * sign-in) until chat setup is done; "Manage Language Models" is the way in without one, and makes it take
 * the models other extensions provide. Its editor opens as a modal over the workbench and must be closed.
 */
async function enableChatModels() {
  const editor = page.locator('.ai-models-management-editor:visible');
  await page.keyboard.press('Escape');
  await runCommand('Chat: Manage Language Models');
  await editor.first().waitFor({ timeout: UI_TIMEOUT_MS });
  await editor.locator('.monaco-list-row', { hasText: MODELS.vision.name }).first().waitFor({ timeout: UI_TIMEOUT_MS });
  for (let attempt = 0; attempt < 5 && (await editor.count()) > 0; attempt++) {
    // Escape closes the modal when the focus is in it (its search box); the close button is the fallback.
    await editor.locator('input').first().focus({ timeout: 5000 }).catch(() => {});
    await page.keyboard.press('Escape');
    await sleep(1000);
    if (attempt >= 2) {
      await visible('.modal-editor-part .codicon-close').click({ timeout: 5000 }).catch(() => {});
    }
  }
  if ((await editor.count()) > 0) {
    throw new Error('the Language Models editor did not close');
  }
}

async function pickModel(name) {
  const current = () => visible('.interactive-input-part .model-picker-name').getAttribute('aria-label');
  if ((await current()) === `Models, ${name}`) {
    return;
  }
  await retryUi(`picking the model ${name}`, async () => {
    await visible('.interactive-input-part .model-picker-name').click({ timeout: UI_TIMEOUT_MS });
    await sleep(500);
    await page.keyboard.type(name);
    await visible(`.monaco-list-row[aria-label^="${name},"]`).click({ timeout: UI_TIMEOUT_MS });
    await sleep(500);
    const label = await current();
    if (label !== `Models, ${name}`) {
      throw new Error(`the picker shows "${label}"`);
    }
  });
}

async function newChat() {
  await retryUi('opening a new chat', async () => {
    await visible('.action-label.codicon-plus[aria-label^="New Chat"]').click({ timeout: UI_TIMEOUT_MS });
    await sleep(800);
    await chatInput();
  });
}

async function sendPrompt(text) {
  await retryUi('typing the prompt', async () => {
    await visible('.interactive-input-part .interactive-input-editor').click({ timeout: UI_TIMEOUT_MS });
    // Whatever an earlier attempt typed is replaced.
    await page.keyboard.press('Control+A');
    await page.keyboard.type(text);
    await page.keyboard.press('Enter');
  });
}

const SKIP_BUTTON = '.monaco-button[aria-label^="Proceed without running this tool"]';
const MORE_ACTIONS = '.monaco-button[aria-label="More Actions..."]';
/** The chat's approvals of a tool: the button, or the row of its "More Actions..." menu, that gives each. */
const CHAT_ANSWERS = {
  'allow-once': { menu: 'Allow Once' },
  'allow-session': { button: 'Allow in this Session' },
  'allow-workspace': { menu: 'Allow in this Workspace' },
  'allow-always': { menu: 'Always Allow' },
};
/** agentread's own question: a modal dialog of the workbench. */
const DIALOG = '.monaco-dialog-box:visible';
/** How long an answered confirmation may still show before it counts as the chat asking again. */
const CONFIRMATION_LINGER_MS = 5000;
/** How long a click on the dialog may take before its button is pressed by keyboard instead. */
const DIALOG_CLICK_MS = 5000;
/** The buttons of agentread's question that give each answer. */
const DIALOG_ANSWERS = { file: /^Allow Th(is File|ese Files)$/, folder: /^Allow Folder for This Session$/, deny: /^Deny$/ };

/** Gives the chat's confirmation `answer`: "skip", or one of CHAT_ANSWERS. */
async function answerChat(answer) {
  if (answer === 'skip') {
    await visible(SKIP_BUTTON).click({ timeout: UI_TIMEOUT_MS });
  } else if (CHAT_ANSWERS[answer].button) {
    await page.locator('.monaco-button:visible', { hasText: CHAT_ANSWERS[answer].button }).first().click({ timeout: UI_TIMEOUT_MS });
  } else {
    await retryUi(`choosing ${CHAT_ANSWERS[answer].menu}`, async () => {
      const menu = page.locator('.action-menu-item:visible', { hasText: CHAT_ANSWERS[answer].menu }).first();
      if (!(await menu.isVisible())) {
        await visible(MORE_ACTIONS).click({ timeout: UI_TIMEOUT_MS });
      }
      // The menu ignores a click that comes as soon as it opens.
      await menu.waitFor({ timeout: UI_TIMEOUT_MS });
      await sleep(1000);
      await menu.click({ timeout: UI_TIMEOUT_MS });
    });
  }
  await page.locator(SKIP_BUTTON).first().waitFor({ state: 'hidden', timeout: UI_TIMEOUT_MS });
}

/** Gives agentread's question `answer` (one of DIALOG_ANSWERS); returns the question's text. */
async function answerDialog(answer) {
  const dialog = visible(DIALOG);
  const text = await dialog.innerText({ timeout: UI_TIMEOUT_MS });
  const button = dialog.locator('.monaco-button', { hasText: DIALOG_ANSWERS[answer] }).first();
  try {
    await button.click({ timeout: DIALOG_CLICK_MS });
  } catch (error) {
    // Now and then the workbench lets no click reach a dialog that is shown; a user's keyboard still does.
    if ((await page.locator(DIALOG).count()) > 0) {
      step(`  answering by keyboard: ${error.message.split('\n')[0]}`);
      await button.focus({ timeout: UI_TIMEOUT_MS });
      await page.keyboard.press('Enter');
    }
  }
  await page.locator(DIALOG).first().waitFor({ state: 'detached', timeout: UI_TIMEOUT_MS });
  return text;
}

/**
 * Plays the scenario's turn until the model recorded what it received: answers the chat's confirmation with
 * `scenario.confirm` and agentread's own question with `scenario.dialog`. A question that comes unexpected is
 * answered Skip or Deny, and reported; so is a read that ran without a question expected. Returns the problems
 * and the text of agentread's question.
 */
async function playTurn(scenario, file) {
  const problems = [];
  let chatAsked = false;
  let answeredAt = 0;
  let dialogText;
  const deadline = Date.now() + SCENARIO_TIMEOUT_MS;
  while (!fs.existsSync(file)) {
    if (Date.now() > deadline) {
      problems.push(`the model recorded nothing within ${SCENARIO_TIMEOUT_MS / 1000} s`);
      return { problems, dialogText };
    }
    // A modal dialog first: while it is up, nothing behind it (the chat's confirmation) takes a click.
    if ((await page.locator(DIALOG).count()) > 0) {
      if (!scenario.dialog || dialogText !== undefined) {
        problems.push(`agentread asked a question this read should not need: ${excerpt(await visible(DIALOG).innerText())}`);
        await answerDialog('deny');
      } else {
        dialogText = await answerDialog(scenario.dialog);
      }
    } else if ((await page.locator(`${SKIP_BUTTON}:visible`).count()) > 0) {
      if (chatAsked && Date.now() - answeredAt < CONFIRMATION_LINGER_MS) {
        // The confirmation just answered can still show while the tool starts and asks its own question.
        await sleep(500);
        continue;
      }
      if (!scenario.confirm || chatAsked) {
        problems.push('the chat asked for a confirmation that this read should not need');
      }
      await answerChat(scenario.confirm && !chatAsked ? scenario.confirm : 'skip');
      chatAsked = true;
      answeredAt = Date.now();
    } else {
      await sleep(500);
    }
  }
  if (scenario.confirm && !chatAsked) {
    problems.push('the tool ran without the chat asking for a confirmation');
  }
  if (scenario.dialog && dialogText === undefined && scenario.confirm !== 'skip') {
    problems.push('the tool ran without agentread asking its own question');
  }
  return { problems, dialogText };
}

/** Shows the tool's input and output in a wide chat and takes the screenshot users would see. */
async function screenshotChat(file) {
  await dismissNotices();
  await visible('.action-label.codicon-auxiliarybar-maximize').click({ timeout: 10_000 }).catch(() => {});
  await sleep(800);
  // The steps of the turn and the tool call are collapsed: open them (a click on each title).
  const steps = page.locator('.interactive-session .monaco-button-mdlabel:visible', { hasText: /^Completed/ });
  await steps.last().click({ timeout: 10_000 }).catch(() => {});
  await sleep(800);
  const invocation = visible('.chat-tool-invocation-part .chat-confirmation-widget-title');
  await invocation.click({ timeout: 10_000 }).catch(() => {});
  await sleep(800);
  await page.screenshot({ path: file });
  await visible('.action-label[aria-label^="Restore Secondary Side Bar"]').click({ timeout: 5000 }).catch(() => {});
}

async function main() {
  fs.mkdirSync(cache, { recursive: true });
  const screenshots = path.join(cache, 'screenshots');
  fs.mkdirSync(screenshots, { recursive: true });
  const shot = path.join(screenshots, 'chat.png');
  // Screenshots of an earlier run's failures would pass for this run's.
  for (const name of fs.readdirSync(screenshots).filter((file) => file.startsWith('chat'))) {
    fs.rmSync(path.join(screenshots, name), { force: true });
  }

  step('compiling the shared test fixtures');
  run(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'extension/tsconfig.json']);
  const vsix = agentreadVsix();

  step(`installing Node ${NODE_VERSION} and code-server ${CODE_SERVER_VERSION} (cached in ${cache})`);
  run('sh', [path.join(root, 'extension', 'test', 'e2e', 'install-code-server.sh')], {
    env: { ...process.env, AGENTREAD_E2E_CACHE: cache, CODE_SERVER_VERSION, CODE_SERVER_NODE_VERSION: NODE_VERSION },
  });
  const nodeDir = path.join(cache, `node-${NODE_VERSION}`);
  const node = path.join(nodeDir, 'bin', 'node');
  const codeServer = path.join(cache, `code-server-${CODE_SERVER_VERSION}`, 'node_modules', '.bin', 'code-server');

  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'agentread-chat-'));
  const fixtures = makeChatFixtures(work, path.join(root, 'extension', 'out', 'test', 'fixtures.js'));
  const only = process.env.AGENTREAD_CHAT_ONLY?.split(',').map((name) => name.trim());
  const phases = PHASES.map((phase) => ({
    ...phase,
    scenarios: phase.scenarios.filter((scenario) => !only || only.includes(scenario.name)),
  })).filter((phase) => phase.scenarios.length > 0);
  const folders = { main: fixtures.workspace };
  for (const phase of phases) {
    if (phase.workspace === 'no-disk') {
      folders[phase.workspace] = fixtures.makeNoDiskWorkspace(phase.settings);
    }
  }
  const ctx = {
    outside: fixtures.outside,
    outsideFiles: fixtures.outsideFiles,
    textLine: fixtures.textLine,
    plotPng: fixtures.plotPng,
  };
  const plan = {
    models: Object.values(MODELS),
    scenarios: Object.fromEntries(
      phases.flatMap((phase) => phase.scenarios).map((scenario) => [
        scenario.name,
        { tool: scenario.tool, input: typeof scenario.input === 'function' ? scenario.input(ctx) : scenario.input },
      ]),
    ),
  };
  fs.writeFileSync(path.join(work, 'scenarios.json'), JSON.stringify(plan, null, 1));

  const userData = path.join(work, 'user-data');
  const extensionsDir = path.join(work, 'extensions');
  writeUserSettings(userData, { 'chat.agent.enabled': true });
  // code-server writes its own config under XDG_CONFIG_HOME: keep it in the temporary directory.
  const env = {
    ...process.env,
    PATH: `${path.join(nodeDir, 'bin')}${path.delimiter}${process.env.PATH}`,
    AGENTREAD_CHAT_DIR: work,
    XDG_CONFIG_HOME: path.join(work, 'config'),
  };
  const common = ['--user-data-dir', userData, '--extensions-dir', extensionsDir];

  step('packaging the scripted model and installing it and the agentread .vsix');
  const scriptedVsix = path.join(work, 'scripted-model.vsix');
  run(
    process.execPath,
    [
      require.resolve('@vscode/vsce/vsce'), 'package', '--no-dependencies', '--skip-license',
      '--allow-missing-repository', '--out', scriptedVsix,
    ],
    { cwd: path.join(here, 'scripted-model'), stdio: ['ignore', 'ignore', 'inherit'] },
  );
  run(node, [codeServer, ...common, '--install-extension', vsix, '--install-extension', scriptedVsix], { env });
  const installed = fs.readdirSync(extensionsDir).find((name) => name.startsWith('agentread.agentread-'));
  if (!installed) {
    throw new Error(`the .vsix did not install into ${extensionsDir}`);
  }
  const manifest = JSON.parse(fs.readFileSync(path.join(extensionsDir, installed, 'package.json'), 'utf8'));
  ctx.manifestTools = manifest.contributes.languageModelTools;

  const port = await freePort();
  step(`starting code-server on port ${port}`);
  server = await startCodeServer(node, [
    codeServer,
    ...common,
    ...serveArgs(port),
  ], { cwd: root, env });

  let setupSeconds;
  const runStarted = Date.now();
  try {
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1600, height: 900 } });
    const consoleLog = [];
    page.on('console', (message) => message.type() === 'error' && consoleLog.push(`[page error] ${message.text()}`));

    const recordings = path.join(work, 'recordings');
    for (const phase of phases) {
      step(`phase: ${phase.name}`);
      await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(folders[phase.workspace])}`);
      await chatInput(WORKBENCH_TIMEOUT_MS);
      // Each window needs it: the state it sets is not reliably there yet when the next window opens.
      await retryUi('enabling the chat with the scripted models', enableChatModels, 3);
      setupSeconds ??= seconds();
      step('the chat agent is enabled with the scripted models');
      for (const scenario of phase.scenarios) {
        const scenarioStarted = Date.now();
        const model = MODELS[scenario.model];
        const result = { name: scenario.name, title: scenario.title, phase: phase.name, model: model.name };
        result.problems = [];
        results.push(result);
        try {
          await dismissNotices();
          if (!scenario.sameChat) {
            await newChat();
          }
          await pickModel(model.name);
          await sendPrompt(`scenario:${scenario.name}`);
          const file = path.join(recordings, `${scenario.name}.json`);
          const turn = await playTurn(scenario, file);
          result.problems.push(...turn.problems);
          if (!fs.existsSync(file)) {
            await page.screenshot({ path: path.join(screenshots, `chat-${scenario.name}-failed.png`) }).catch(() => {});
            await page.keyboard.press('Escape').catch(() => {});
            await visible('.action-label.codicon-stop-circle').click({ timeout: 2000 }).catch(() => {});
          } else {
            const recording = JSON.parse(fs.readFileSync(file, 'utf8'));
            const received = toolResult(recording);
            const probeFile = path.join(work, 'probes', `${scenario.name}.json`);
            const probe = fs.existsSync(probeFile) ? JSON.parse(fs.readFileSync(probeFile, 'utf8')) : undefined;
            result.received = received && {
              textChars: received.text.length,
              textParts: received.parts.filter((part) => part.type === 'text').map((part) => part.text.length),
              images: received.images.map((image) => `${image.mimeType} ${image.bytes} B`),
              excerpt: excerpt(received.text, 160),
            };
            result.probe = probe;
            result.measured = received && scenario.measure?.(received);
            if (!received) {
              result.problems.push(
                `the chat passed on no tool result: the model called the tool ${recording.toolCalls} times and ` +
                  'its messages never held a result (the chat dropped the call from the prompt)',
              );
            } else {
              result.problems.push(...scenario.check(received, { ...ctx, recording, probe, dialogText: turn.dialogText }));
            }
            // The model answers right after recording; let the chat show it before the next one starts.
            await page
              .getByText(`Scenario ${scenario.name}: recorded.`)
              .first()
              .waitFor({ timeout: 30_000 })
              .catch(() => {});
            if (scenario.screenshot) {
              await screenshotChat(shot);
            }
          }
        } catch (error) {
          result.problems.push(`the chat could not be driven: ${error.message.split('\n')[0]}`);
          await page.screenshot({ path: path.join(screenshots, `chat-${scenario.name}-failed.png`) }).catch(() => {});
        }
        result.seconds = Number(seconds(scenarioStarted));
        step(`  ${result.problems.length ? 'FAIL' : 'ok  '} ${scenario.name} (${result.seconds} s)`);
      }
    }
    fs.writeFileSync(path.join(cache, 'chat-console.log'), consoleLog.join('\n'));
    const shown = phases.flatMap((phase) => phase.scenarios).find((scenario) => scenario.screenshot);
    if (shown) {
      results.push(checkScreenshot(shot, shown.name));
    }
  } finally {
    step('stopping Chromium and code-server');
    await stopProcesses();
    // The recordings are what the model received: keep them for whoever reads a failure.
    const kept = path.join(cache, 'chat-recordings');
    fs.rmSync(kept, { recursive: true, force: true });
    for (const sub of ['recordings', 'probes']) {
      if (fs.existsSync(path.join(work, sub))) {
        fs.cpSync(path.join(work, sub), path.join(kept, sub), { recursive: true });
      }
    }
    if (fs.existsSync(path.join(work, 'model-requests.jsonl'))) {
      fs.copyFileSync(path.join(work, 'model-requests.jsonl'), path.join(kept, 'model-requests.jsonl'));
    }
    if (!process.env.AGENTREAD_CHAT_KEEP) {
      fs.rmSync(work, { recursive: true, force: true });
    }
  }
  report(results, { setupSeconds, runSeconds: seconds(runStarted) });
}

/** The screenshot of the chat exists and is not one flat colour (a blank or failed workbench is). */
function checkScreenshot(file, scenario) {
  const title = `a screenshot of the chat after ${scenario}: ${file}`;
  const result = { name: 'screenshot', title, phase: 'screenshot', model: '-', problems: [] };
  if (!fs.existsSync(file)) {
    result.problems.push('no screenshot was taken');
    return result;
  }
  const stats = imageStats(decodePng(fs.readFileSync(file)));
  if (stats.variance < 200 || stats.colours < 50) {
    const figures = `variance ${stats.variance.toFixed(1)}, ${stats.colours} colours`;
    result.problems.push(`the screenshot looks blank (${figures})`);
  }
  return result;
}

function report(results, timing) {
  fs.writeFileSync(path.join(cache, 'chat-results.json'), JSON.stringify({ timing, results }, null, 2));
  console.log('');
  let phase;
  for (const result of results) {
    if (result.phase !== phase) {
      phase = result.phase;
      console.log(`${phase}:`);
    }
    console.log(`  ${result.problems.length ? 'FAIL' : 'ok  '} ${result.name} [${result.model}]: ${result.title}`);
    for (const problem of result.problems) {
      console.log(`         ${problem}`);
    }
  }
  console.log('');
  console.log('Measured:');
  const byName = Object.fromEntries(results.map((result) => [result.name, result]));
  for (const name of ['probe-normal', 'probe-small']) {
    const probe = byName[name]?.probe;
    if (probe) {
      console.log(
        `  ${name}: tokenizationOptions ${probe.hasTokenizationOptions ? 'given' : 'absent'}, ` +
          `tokenBudget ${probe.tokenBudget}, ` +
          `${probe.sampleChars} chars counted as ${probe.sampleTokens} tokens`,
      );
    }
  }
  for (const result of results) {
    if (result.measured) {
      console.log(`  ${result.name}: ${result.measured}`);
    } else if (result.received && !result.probe) {
      const { textChars, textParts, images } = result.received;
      const parts = `${textChars} chars of text in parts [${textParts.join(', ')}]; images [${images.join(', ')}]`;
      console.log(`  ${result.name}: ${parts}`);
    }
  }
  console.log(
    `  setup until the chat was ready: ${timing.setupSeconds ?? '?'} s; browser session: ${timing.runSeconds} s; ` +
      `total ${seconds()} s`,
  );
  const failed = results.filter((result) => result.problems.length > 0).length;
  if (results.length === 0) {
    console.log('chat: FAILED: no scenario ran (AGENTREAD_CHAT_ONLY names none?)');
  }
  const recordings = path.join(cache, 'chat-recordings');
  console.log(`chat: ${results.length - failed} passed, ${failed} failed (recordings in ${recordings})`);
  if (failed > 0 || results.length === 0) {
    process.exitCode = 1;
  }
}

const timeout = setTimeout(async () => {
  const running = results.find((result) => result.seconds === undefined);
  running?.problems.push('the suite timed out during this scenario');
  report(results, { setupSeconds: undefined, runSeconds: '?' });
  console.error(`chat: FAILED: the suite did not finish within ${SUITE_TIMEOUT_MS / 60_000} min`);
  await stopProcesses();
  process.exit(1);
}, SUITE_TIMEOUT_MS);
timeout.unref();

main().then(
  () => step('done'),
  (error) => {
    console.error(`chat: ${error.stack ?? error}`);
    stopProcesses().finally(() => process.exit(1));
  },
);
