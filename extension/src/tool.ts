// The language model tools `agentread_read` and `agentread_read_many`: each asks the user first when a read
// needs consent, forwards the read to the server, and hands the model text and image parts.

import * as vscode from 'vscode';
import { checkConsent, consentQuestion, consentQuestionMany } from './consent';
import { failureText, toParts, versionLine, type PartFactory } from './convert';
import {
  entryPath,
  forwardRead,
  forwardReadMany,
  invocationMessage,
  manyInvocationMessage,
  toReadManyParams,
  toReadParams,
  type ReadInput,
  type ReadManyInput,
  type ReadManyResult,
  type ReadResult,
} from './protocol';
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

function inputKey(input: ReadInput): string {
  return JSON.stringify(toReadParams(input, false));
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

/**
 * What each tool call asks the user: prepareInvocation notes it, and VS Code invokes the tool only once the
 * user agreed, so the invocation takes the approval noted for the same input.
 */
class Approvals<T> {
  private readonly pending = new Map<string, T>();

  /** The prepared invocation of the input `key`: asking `question`, which grants `approval`, if there is one. */
  prepare(message: string, key: string, question?: { title: string; message: string }, approval?: T): vscode.PreparedToolInvocation {
    if (!question || approval === undefined) {
      this.pending.delete(key);
      return { invocationMessage: message };
    }
    this.pending.set(key, approval);
    return {
      invocationMessage: message,
      confirmationMessages: { title: question.title, message: new vscode.MarkdownString(question.message) },
    };
  }

  /** The approval the user gave for the input `key`, once. */
  take(key: string): T | undefined {
    const approval = this.pending.get(key);
    this.pending.delete(key);
    return approval;
  }
}

export class ReadTool implements vscode.LanguageModelTool<ReadInput> {
  private readonly approvals = new Approvals<true>();

  constructor(
    private readonly server: ServerManager,
    private readonly reads: ReadLog,
  ) {}

  async prepareInvocation(
    options: vscode.LanguageModelToolInvocationPrepareOptions<ReadInput>,
    token: vscode.CancellationToken,
  ): Promise<vscode.PreparedToolInvocation> {
    const input = options.input;
    const checks = typeof input?.path === 'string' ? await consentChecks(this.server, [input.path], token) : [];
    const question = checks.length > 0 ? consentQuestion(checks[0]) : undefined;
    return this.approvals.prepare(invocationMessage(input), inputKey(input), question, true);
  }

  async invoke(
    options: vscode.LanguageModelToolInvocationOptions<ReadInput>,
    token: vscode.CancellationToken,
  ): Promise<vscode.LanguageModelToolResult> {
    const input = options.input;
    const consent = this.approvals.take(inputKey(input)) === true;
    const started = new Date();
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

function manyKey(input: ReadManyInput): string {
  return JSON.stringify(toReadManyParams(input, []));
}

export class ReadManyTool implements vscode.LanguageModelTool<ReadManyInput> {
  /** The paths the user approves, for each input being asked about. */
  private readonly approvals = new Approvals<string[]>();

  constructor(
    private readonly server: ServerManager,
    private readonly reads: ReadLog,
  ) {}

  async prepareInvocation(
    options: vscode.LanguageModelToolInvocationPrepareOptions<ReadManyInput>,
    token: vscode.CancellationToken,
  ): Promise<vscode.PreparedToolInvocation> {
    const input = options.input;
    const paths = Array.isArray(input?.paths) ? input.paths.map(entryPath) : [];
    const needed = await consentChecks(this.server, paths, token);
    const question = needed.length > 0 ? consentQuestionMany(needed) : undefined;
    return this.approvals.prepare(manyInvocationMessage(input), manyKey(input), question, needed.map((each) => each.path));
  }

  async invoke(
    options: vscode.LanguageModelToolInvocationOptions<ReadManyInput>,
    token: vscode.CancellationToken,
  ): Promise<vscode.LanguageModelToolResult> {
    const input = options.input;
    const approved = this.approvals.take(manyKey(input)) ?? [];
    const started = new Date();
    const work = withinBudget(options, (maxBytes) => forwardReadMany(this.server.send, input, approved, token, maxBytes), token);
    const result = await readOrFailure(manyInvocationMessage(input), work, token);
    if (typeof result === 'string') {
      const paths = Array.isArray(input?.paths) ? input.paths.map(entryPath) : [];
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
  const line = 'version' in result ? versionLine(result) : undefined;
  const parts = toParts(result, partFactory());
  return new vscode.LanguageModelToolResult(line ? [...parts, new vscode.LanguageModelTextPart(line)] : parts);
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
