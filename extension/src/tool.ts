// The language model tools `agentread_read` and `agentread_read_many`: each asks the user first when a read
// needs consent, forwards the read to the server, and hands the model text and image parts. The chat's
// confirmation names the files; the consent the server gets comes only from agentread's own question
// (grants.ts), which no approval of the tool in the chat skips.

import * as vscode from 'vscode';
import { checkConsent, consentQuestion, consentQuestionMany, declinedText, grantQuestion, type ConsentCheck } from './consent';
import { failureText, toParts, type PartFactory } from './convert';
import {
  entryPath,
  forwardRead,
  forwardReadMany,
  invocationMessage,
  manyInvocationMessage,
  type ReadInput,
  type ReadManyInput,
  type ReadManyResult,
  type ReadResult,
} from './protocol';
import { folderOf, type Answer, type ConsentGrants } from './grants';
import type { ReadLog } from './reads';
import { replyBytes, shrunkForTokens, textBytes } from './replySize';
import type { ServerManager } from './server';
import { hostToolResultLimit, readSettings } from './settings';

export const TOOL_NAME = 'agentread_read';
export const MANY_TOOL_NAME = 'agentread_read_many';

/** A read still running after this long shows progress in the status bar. */
const SLOW_READ_MS = 700;

type ToolPart = vscode.LanguageModelTextPart | vscode.LanguageModelPromptTsxPart;

/** `LanguageModelDataPart` is API from VS Code 1.104 on; older versions get a text note per image. */
interface DataPartClass {
  image(data: Uint8Array, mimeType: string): ToolPart;
}

export function partFactory(): PartFactory<ToolPart> {
  const dataPart = (vscode as unknown as { LanguageModelDataPart?: DataPartClass }).LanguageModelDataPart;
  return {
    text: (value) => new vscode.LanguageModelTextPart(value),
    image: typeof dataPart?.image === 'function' ? (data, mimeType) => dataPart.image(data, mimeType) : undefined,
  };
}

/**
 * The paths of a call that need the user's approval, as the server decides. A server that cannot answer asks
 * nothing: it cannot read either, and the model gets the failure.
 */
async function consentChecks(server: ServerManager, paths: string[], token: vscode.CancellationToken) {
  try {
    return await checkConsent(server.send, paths, token);
  } catch {
    return [];
  }
}

/** Shows a window progress indicator if `work` is still running after SLOW_READ_MS. */
export async function withSlowProgress<T>(title: string, work: Promise<T>): Promise<T> {
  const timer = setTimeout(() => {
    void vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title }, () =>
      work.then(
        () => undefined,
        () => undefined,
      ),
    );
  }, SLOW_READ_MS);
  try {
    return await work;
  } finally {
    clearTimeout(timer);
  }
}

/** The prepared invocation: the chat's confirmation, naming what it is about, when a file is not allowed yet. */
function prepared(message: string, question?: { title: string; message: string }): vscode.PreparedToolInvocation {
  if (!question) {
    return { invocationMessage: message };
  }
  return {
    invocationMessage: message,
    confirmationMessages: { title: question.title, message: new vscode.MarkdownString(question.message) },
  };
}

/**
 * agentread's own question about the files `checks` names, a modal dialog nothing skips. A dialog that
 * cannot be shown (a test run of the workbench refuses dialogs) or is dismissed is a denial.
 */
async function askUser(checks: readonly ConsentCheck[]): Promise<Answer> {
  const question = grantQuestion(checks, folderOf);
  const file = { title: question.allowFile };
  const folder = { title: question.allowFolder };
  const deny = { title: question.deny, isCloseAffordance: true };
  try {
    const answer = await vscode.window.showWarningMessage(question.message, { modal: true, detail: question.detail }, file, folder, deny);
    return answer === file ? 'file' : answer === folder ? 'folder' : 'deny';
  } catch {
    return 'deny';
  }
}

/**
 * The reads of one call that need the user's approval, asked where no grant covers them yet: what the user
 * allowed, and what they declined.
 */
async function consentFor(
  server: ServerManager,
  grants: ConsentGrants,
  paths: string[],
  token: vscode.CancellationToken,
): Promise<{ allowed: ConsentCheck[]; declined: ConsentCheck[] }> {
  const checks = await consentChecks(server, paths, token);
  const asked = grants.uncovered(checks);
  if (asked.length > 0) {
    grants.record(await askUser(asked), asked);
  }
  return { allowed: checks.filter((check) => grants.covers(check)), declined: grants.uncovered(checks) };
}

export class ReadTool implements vscode.LanguageModelTool<ReadInput> {
  constructor(
    private readonly server: ServerManager,
    private readonly reads: ReadLog,
    private readonly grants: ConsentGrants,
  ) {}

  async prepareInvocation(
    options: vscode.LanguageModelToolInvocationPrepareOptions<ReadInput>,
    token: vscode.CancellationToken,
  ): Promise<vscode.PreparedToolInvocation> {
    const input = options.input;
    const checks = typeof input?.path === 'string' ? await consentChecks(this.server, [input.path], token) : [];
    const asked = this.grants.uncovered(checks);
    return prepared(invocationMessage(input), asked.length > 0 ? consentQuestion(asked[0]) : undefined);
  }

  async invoke(
    options: vscode.LanguageModelToolInvocationOptions<ReadInput>,
    token: vscode.CancellationToken,
  ): Promise<vscode.LanguageModelToolResult> {
    const input = options.input;
    const started = new Date();
    const paths = typeof input?.path === 'string' ? [input.path] : [];
    const { allowed, declined } = await consentFor(this.server, this.grants, paths, token);
    if (declined.length > 0) {
      const text = `Error: ${declinedText(declined)}`;
      this.reads.recordFailure(input, text, started);
      return toolResult(text);
    }
    const consent = allowed.length > 0;
    const work = withinBudget(options, (maxBytes) => forwardRead(this.server.send, input, consent, token, maxBytes), token);
    const result = await readOrFailure(invocationMessage(input), work, token);
    if (typeof result === 'string') {
      this.reads.recordFailure(input, result, started);
    } else {
      this.reads.record(input, result, started);
    }
    return toolResult(result);
  }
}

export class ReadManyTool implements vscode.LanguageModelTool<ReadManyInput> {
  constructor(
    private readonly server: ServerManager,
    private readonly reads: ReadLog,
    private readonly grants: ConsentGrants,
  ) {}

  async prepareInvocation(
    options: vscode.LanguageModelToolInvocationPrepareOptions<ReadManyInput>,
    token: vscode.CancellationToken,
  ): Promise<vscode.PreparedToolInvocation> {
    const input = options.input;
    const paths = Array.isArray(input?.paths) ? input.paths.map(entryPath) : [];
    const asked = this.grants.uncovered(await consentChecks(this.server, paths, token));
    return prepared(manyInvocationMessage(input), asked.length > 0 ? consentQuestionMany(asked) : undefined);
  }

  async invoke(
    options: vscode.LanguageModelToolInvocationOptions<ReadManyInput>,
    token: vscode.CancellationToken,
  ): Promise<vscode.LanguageModelToolResult> {
    const input = options.input;
    const started = new Date();
    const paths = Array.isArray(input?.paths) ? input.paths.map(entryPath) : [];
    const { allowed, declined } = await consentFor(this.server, this.grants, paths, token);
    const approved = allowed.map((check) => check.path);
    // The server refuses the declined files in their places; the model is told first that the user declined
    // them, within the reply's size.
    const note = declined.length > 0 ? `[${declinedText(declined)}]\n` : '';
    const read = (maxBytes: number | undefined) =>
      forwardReadMany(this.server.send, input, approved, token, maxBytes && maxBytes - Buffer.byteLength(note));
    const result = await readOrFailure(manyInvocationMessage(input), withinBudget(options, read, token), token);
    if (typeof result !== 'string' && note) {
      result.content.unshift({ type: 'text', text: note });
    }
    if (typeof result === 'string') {
      paths.forEach((path) => this.reads.recordFailure({ path }, result, started));
    } else {
      this.reads.recordMany(result, started);
    }
    return toolResult(result);
  }
}

/**
 * `read` within this invocation's reply limit: the user's setting, else the host's (replySize.ts). A reply that
 * counts more tokens than the model's budget for it is asked for again, smaller, once; a limit the user set is
 * kept as it is.
 */
async function withinBudget<T extends ReadResult | ReadManyResult>(
  options: vscode.LanguageModelToolInvocationOptions<unknown>,
  read: (maxBytes: number | undefined) => Promise<T>,
  token: vscode.CancellationToken,
): Promise<T> {
  const setting = readSettings().maxReplyBytes;
  const tokenization = options.tokenizationOptions;
  const result = await read(
    replyBytes({ setting, hostThreshold: hostToolResultLimit(), tokenBudget: tokenization?.tokenBudget }),
  );
  if (!tokenization || setting > 0 || result.isError) {
    return result;
  }
  const text = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
  const tokens = await tokenization.countTokens(text, token);
  if (tokens <= tokenization.tokenBudget) {
    return result;
  }
  return read(shrunkForTokens(textBytes(result.content), tokens, tokenization.tokenBudget));
}

/** What the model receives: the result's text and image parts, or the text of a request that failed. */
function toolResult(result: ReadResult | ReadManyResult | string): vscode.LanguageModelToolResult {
  if (typeof result === 'string') {
    return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(result)]);
  }
  return new vscode.LanguageModelToolResult(toParts(result, partFactory()));
}

/**
 * A read under way, with progress when it is slow. A request that failed (malformed arguments, a server
 * that stopped) becomes the text the model reads; a cancelled one throws as VS Code expects.
 */
async function readOrFailure<T extends ReadResult | ReadManyResult>(
  message: string,
  work: Promise<T>,
  token: vscode.CancellationToken,
): Promise<T | string> {
  try {
    return await withSlowProgress(`agentread: ${message}`, work);
  } catch (error) {
    if (token.isCancellationRequested) {
      throw new vscode.CancellationError();
    }
    return failureText(error);
  }
}
