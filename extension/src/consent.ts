// When a read needs the user's approval, as the server decides it: `agentread/check` answers with the one rule
// the server enforces (python/agentread/workspace.py, Workspace.refusal), so the tool asks exactly when a read
// would be refused. No `vscode` import, so the unit tests check it against the real server.

import type { SendRequest } from './protocol';

/** The JSON-RPC method that tells, for each path, what would refuse a read of it without approval. */
export const CHECK_METHOD = 'agentread/check';

export interface ConsentCheck {
  /** The path as the model gave it. */
  path: string;
  /** The path the read resolves to, symbolic links followed. */
  resolvedPath: string;
  outsideWorkspace: boolean;
  /** The setting's glob that marks the file sensitive, if one does. */
  sensitivePattern?: string;
}

/** One path's answer from `agentread/check` (docs/CONTRACT.md). */
interface ServerCheck {
  path: string;
  reasons: string[];
  real: string | null;
  pattern: string | null;
}

/**
 * The paths of one call whose reads need the user's approval, and why, as the server decides; globs and paths
 * that name no file need none (the server expands globs inside the workspace only, and refuses the rest).
 */
export async function checkConsent(send: SendRequest, paths: readonly string[], token?: unknown): Promise<ConsentCheck[]> {
  const unique = [...new Set(paths.filter((path) => typeof path === 'string' && path !== ''))];
  if (unique.length === 0) {
    return [];
  }
  const answer = (await send(CHECK_METHOD, { paths: unique }, token)) as { checks: ServerCheck[] };
  return answer.checks
    .filter((check) => check.reasons.length > 0)
    .map((check) => ({
      path: check.path,
      resolvedPath: check.real ?? check.path,
      outsideWorkspace: check.reasons.includes('outside_workspace'),
      sensitivePattern: check.reasons.includes('sensitive_file') ? (check.pattern ?? '') : undefined,
    }));
}

/** The question put to the user (the message is Markdown). */
export function consentQuestion(check: ConsentCheck): { title: string; message: string } {
  const shown = '`' + check.resolvedPath.replace(/`/g, "'") + '`';
  const sent = 'If you allow it, its contents are sent to the language model.';
  if (check.outsideWorkspace && check.sensitivePattern) {
    return {
      title: 'Allow reading a sensitive file outside the workspace?',
      message: `The agent wants to read ${shown}, which is outside the workspace and matches \`${check.sensitivePattern}\` in the \`agentread.sensitiveFiles\` setting. ${sent}`,
    };
  }
  if (check.outsideWorkspace) {
    return {
      title: 'Allow reading a file outside the workspace?',
      message: `The agent wants to read ${shown}, which is outside the workspace. ${sent}`,
    };
  }
  return {
    title: 'Allow reading a sensitive file?',
    message: `The agent wants to read ${shown}, which matches \`${check.sensitivePattern}\` in the \`agentread.sensitiveFiles\` setting and may hold secrets. ${sent}`,
  };
}

/** The question put to the user about several files of one call (the message is Markdown). */
export function consentQuestionMany(checks: readonly ConsentCheck[]): { title: string; message: string } {
  if (checks.length === 1) {
    return consentQuestion(checks[0]);
  }
  const lines = checks.map((check) => {
    const why = [
      check.outsideWorkspace ? 'outside the workspace' : '',
      check.sensitivePattern ? `matches \`${check.sensitivePattern}\`` : '',
    ].filter(Boolean);
    return `- \`${check.resolvedPath.replace(/`/g, "'")}\`: ${why.join(', ')}`;
  });
  return {
    title: `Allow reading ${checks.length} files outside the workspace or marked sensitive?`,
    message:
      `The agent wants to read these files, which are outside the workspace or match the \`agentread.sensitiveFiles\` setting:\n\n` +
      `${lines.join('\n')}\n\nIf you allow it, their contents are sent to the language model.`,
  };
}
