// What both real-VS-Code runners share (e2e/run.mjs, chat/run.mjs): a free port, code-server started and waited
// for, the user settings of a quiet test profile, and headless Chromium as this machine can run it offline.

import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { chromium } from 'playwright-core';

/** How long code-server may take to listen: a cold start on a loaded 2-core machine takes tens of seconds. */
const START_TIMEOUT_MS = 120_000;

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/**
 * Starts `command args` (code-server) in its own process group, so that stopping it also stops the extension
 * host and the servers it started; resolves with the child once it listens.
 */
export function startCodeServer(command, args, options = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true, ...options });
    let output = '';
    const timer = setTimeout(() => reject(new Error(`code-server did not start:\n${output}`)), START_TIMEOUT_MS);
    const onData = (chunk) => {
      output += String(chunk);
      if (output.includes('HTTP server listening')) {
        clearTimeout(timer);
        resolve(child);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => reject(new Error(`code-server exited (${code}):\n${output}`)));
  });
}

/** code-server's flags for a test run on `port`: no auth, telemetry, update check, trust prompt or walkthrough. */
export function serveArgs(port) {
  return [
    '--auth', 'none',
    '--bind-addr', `127.0.0.1:${port}`,
    '--disable-telemetry',
    '--disable-update-check',
    '--disable-workspace-trust',
    '--disable-getting-started-override',
  ];
}

/** Writes the user settings of a test profile: no tips, updates, telemetry or trust prompts, plus `extra`. */
export function writeUserSettings(userData, extra = {}) {
  fs.mkdirSync(path.join(userData, 'User'), { recursive: true });
  fs.writeFileSync(
    path.join(userData, 'User', 'settings.json'),
    JSON.stringify({
      'workbench.startupEditor': 'none',
      'workbench.tips.enabled': false,
      'security.workspace.trust.enabled': false,
      'extensions.autoCheckUpdates': false,
      'extensions.autoUpdate': false,
      'telemetry.telemetryLevel': 'off',
      // VS Code for the web saves edits after a second by default; the desktop does not. Tests of unsaved
      // edits need them to stay unsaved.
      'files.autoSave': 'off',
      ...extra,
    }),
  );
}

/** Debian's Chromium, headless, without the background connections this machine's closed network refuses. */
export function launchChromium() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run',
    ],
  });
}
