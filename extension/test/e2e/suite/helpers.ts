// What the integration suites share: the installed extension, waiting for a condition, a tool result's text.

import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { AgentreadApi } from '../../../src/extension';

const EXTENSION_ID = 'agentread.agentread';

/** How long a wait for the editor or the server may take before it counts as a hang: only a hang takes this long, so no
 * test passes or fails on how fast the machine is. */
export const HANG_GUARD_MS = 60_000;

/** `work`, or a failure naming `what` if it has not settled within HANG_GUARD_MS. */
export async function withinHangGuard<T>(what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} never came`)), HANG_GUARD_MS);
  });
  try {
    return await Promise.race([work, hang]);
  } finally {
    clearTimeout(timer);
  }
}

/** Waits until `condition` holds, polling; fails after `timeoutMs` naming `what`. */
export async function waitFor(what: string, condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The installed extension's API, once its server runs. */
export async function activated(): Promise<AgentreadApi> {
  const extension = vscode.extensions.getExtension<AgentreadApi>(EXTENSION_ID);
  assert.ok(extension, `${EXTENSION_ID} is installed`);
  const api = await extension.activate();
  await waitFor('the server to run', () => api.server.state === 'running', 60_000);
  return api;
}

/** The text parts of a tool result as the chat joins them: with nothing between them. */
export function textOf(result: vscode.LanguageModelToolResult): string {
  return result.content
    .filter((part): part is vscode.LanguageModelTextPart => part instanceof vscode.LanguageModelTextPart)
    .map((part) => part.value)
    .join('');
}
