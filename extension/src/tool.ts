// The language model tool `agentread_read`: asks the user first when a read needs consent, forwards the
// read to the server, and hands the model text and image parts.

import * as vscode from 'vscode';
import { checkConsent, consentQuestion, needsConsent, type ConsentCheck } from './consent';
import { failureText, toParts, type PartFactory } from './convert';
import { forwardRead, invocationMessage, toReadParams, type ReadInput, type ReadResult } from './protocol';
import type { ReadLog } from './reads';
import type { ServerManager } from './server';
import { readSettings, workspaceFolderPaths } from './settings';

export const TOOL_NAME = 'agentread_read';

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
    let result: ReadResult;
    try {
      result = await withSlowProgress(
        `agentread: ${invocationMessage(input)}`,
        forwardRead(this.server.send, input, consent, token),
      );
    } catch (error) {
      if (token.isCancellationRequested) {
        throw new vscode.CancellationError();
      }
      const text = failureText(error);
      this.reads.recordFailure(input, text, started);
      return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(text)]);
    }
    this.reads.record(input, result, started);
    return new vscode.LanguageModelToolResult(toParts(result, partFactory()));
  }
}
