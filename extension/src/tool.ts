// The language model tools `agentread_read` and `agentread_read_many`: each asks the user first when a read
// needs consent, forwards the read to the server, and hands the model text and image parts.

import * as vscode from 'vscode';
import { checkConsent, consentQuestion, consentQuestionMany, isGlob, needsConsent, type ConsentCheck } from './consent';
import { failureText, toParts, type PartFactory } from './convert';
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
import type { ServerManager } from './server';
import { readSettings, workspaceFolderPaths } from './settings';

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

/** The consent rules applied to one input, or undefined when there is no path to check. */
export function consentCheckFor(input: ReadInput): ConsentCheck | undefined {
  if (typeof input?.path !== 'string' || input.path === '') {
    return undefined; // the server answers a malformed request with -32602
  }
  return checkConsent(input.path, workspaceFolderPaths(), readSettings().sensitiveFiles);
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

export class ReadTool implements vscode.LanguageModelTool<ReadInput> {
  /** Inputs the user is being asked about: VS Code invokes the tool only once they agreed. */
  private readonly awaitingConsent = new Set<string>();

  constructor(
    private readonly server: ServerManager,
    private readonly reads: ReadLog,
  ) {}

  prepareInvocation(
    options: vscode.LanguageModelToolInvocationPrepareOptions<ReadInput>,
  ): vscode.PreparedToolInvocation {
    const input = options.input;
    const message = invocationMessage(input);
    const check = consentCheckFor(input);
    if (!check || !needsConsent(check)) {
      this.awaitingConsent.delete(inputKey(input));
      return { invocationMessage: message };
    }
    this.awaitingConsent.add(inputKey(input));
    const question = consentQuestion(check);
    return {
      invocationMessage: message,
      confirmationMessages: { title: question.title, message: new vscode.MarkdownString(question.message) },
    };
  }

  async invoke(
    options: vscode.LanguageModelToolInvocationOptions<ReadInput>,
    token: vscode.CancellationToken,
  ): Promise<vscode.LanguageModelToolResult> {
    const input = options.input;
    const consent = this.awaitingConsent.delete(inputKey(input));
    const started = new Date();
    const result = await readOrFailure(invocationMessage(input), forwardRead(this.server.send, input, consent, token), token);
    if (typeof result === 'string') {
      this.reads.recordFailure(input, result, started);
      return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(result)]);
    }
    this.reads.record(input, result, started);
    return new vscode.LanguageModelToolResult(toParts(result, partFactory()));
  }
}

/**
 * The entries of a read of many files that need the user's approval, by their path as given, with why.
 * Globs need none: the server expands them inside the workspace only, and a sensitive file one matches is
 * refused there, for the model to name it (and the user to be asked).
 */
export function manyConsentChecks(input: ReadManyInput): Array<{ path: string; check: ConsentCheck }> {
  if (!Array.isArray(input?.paths)) {
    return [];
  }
  const folders = workspaceFolderPaths();
  const patterns = readSettings().sensitiveFiles;
  const found = new Map<string, ConsentCheck>();
  for (const requested of input.paths.map(entryPath)) {
    if (requested && !found.has(requested) && !isGlob(requested, folders)) {
      const check = checkConsent(requested, folders, patterns);
      if (needsConsent(check)) {
        found.set(requested, check);
      }
    }
  }
  return [...found].map(([path, check]) => ({ path, check }));
}

export class ReadManyTool implements vscode.LanguageModelTool<ReadManyInput> {
  /** Inputs the user is being asked about, with the paths they approve: VS Code invokes the tool only once they agreed. */
  private readonly awaitingConsent = new Map<string, string[]>();

  constructor(
    private readonly server: ServerManager,
    private readonly reads: ReadLog,
  ) {}

  prepareInvocation(
    options: vscode.LanguageModelToolInvocationPrepareOptions<ReadManyInput>,
  ): vscode.PreparedToolInvocation {
    const input = options.input;
    const message = manyInvocationMessage(input);
    const key = JSON.stringify(toReadManyParams(input, []));
    const needed = manyConsentChecks(input);
    if (needed.length === 0) {
      this.awaitingConsent.delete(key);
      return { invocationMessage: message };
    }
    this.awaitingConsent.set(key, needed.map((each) => each.path));
    const question = consentQuestionMany(needed.map((each) => each.check));
    return {
      invocationMessage: message,
      confirmationMessages: { title: question.title, message: new vscode.MarkdownString(question.message) },
    };
  }

  async invoke(
    options: vscode.LanguageModelToolInvocationOptions<ReadManyInput>,
    token: vscode.CancellationToken,
  ): Promise<vscode.LanguageModelToolResult> {
    const input = options.input;
    const key = JSON.stringify(toReadManyParams(input, []));
    const approved = this.awaitingConsent.get(key) ?? [];
    this.awaitingConsent.delete(key);
    const started = new Date();
    const message = manyInvocationMessage(input);
    const result = await readOrFailure(message, forwardReadMany(this.server.send, input, approved, token), token);
    if (typeof result === 'string') {
      const paths = Array.isArray(input?.paths) ? input.paths.map(entryPath) : [];
      paths.forEach((path) => this.reads.recordFailure({ path }, result, started));
      return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(result)]);
    }
    this.reads.recordMany(result, started);
    return new vscode.LanguageModelToolResult(toParts(result, partFactory()));
  }
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
