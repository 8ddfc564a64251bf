// When a read needs the user's approval, as the server decides it: `agentread/check` answers with the one rule
// the server enforces (python/agentread/workspace.py, Workspace.refusal), so the tool asks exactly when a read
// would be refused. No `vscode` import, so the unit tests check it against the real server.

import type { SendRequest } from './protocol';

/** The JSON-RPC method that tells, for each path, what would refuse a read of it without approval. */
export const CHECK_METHOD = 'agentread/check';

/** The server's `pattern` for a file asked about because it has other hard links, not for a pattern it matches. */
export const HARD_LINK = 'a hard link (st_nlink > 1)';

export interface ConsentCheck {
  /** The path as the model gave it. */
  path: string;
  /** The path the read resolves to, symbolic links followed. */
  resolvedPath: string;
  outsideWorkspace: boolean;
  /** The setting's glob that marks the file sensitive, or HARD_LINK, if the file is sensitive. */
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

/**
 * What the chat's confirmation adds: approving the tool there is not approving the file. VS Code skips that
 * confirmation for every later call once the tool is allowed for the session, the workspace or always; agentread
 * asks about the files itself.
 */
const CHAT_APPROVAL_NOTE =
  'agentread then asks you about this file itself, in a dialog: allowing this tool here does not allow any file.';

/** The question the chat's confirmation puts to the user (the message is Markdown). */
export function consentQuestion(check: ConsentCheck): { title: string; message: string } {
  const shown = '`' + check.resolvedPath.replace(/`/g, "'") + '`';
  const sent = `If you allow it, its contents are sent to the language model. ${CHAT_APPROVAL_NOTE}`;
  if (check.outsideWorkspace && check.sensitivePattern) {
    return {
      title: 'Allow reading a sensitive file outside the workspace?',
      message: `The agent wants to read ${shown}, which is outside the workspace and ${sensitiveWhy(check.sensitivePattern, '`')}. ${sent}`,
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
    message: `The agent wants to read ${shown}, which ${sensitiveWhy(check.sensitivePattern ?? '', '`')} and may hold secrets. ${sent}`,
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
      check.sensitivePattern === HARD_LINK ? 'a hard link' : check.sensitivePattern ? `matches \`${check.sensitivePattern}\`` : '',
    ].filter(Boolean);
    return `- \`${check.resolvedPath.replace(/`/g, "'")}\`: ${why.join(', ')}`;
  });
  return {
    title: `Allow reading ${checks.length} files outside the workspace or marked sensitive?`,
    message:
      `The agent wants to read these files, which are outside the workspace or match the \`agentread.sensitiveFiles\` setting:\n\n` +
      `${lines.join('\n')}\n\nIf you allow it, their contents are sent to the language model. ` +
      CHAT_APPROVAL_NOTE.replace('this file', 'these files'),
  };
}

/** Why a file is sensitive, in words quoted with `quote`: the setting's pattern it matches, or that it is a hard link. */
function sensitiveWhy(pattern: string, quote: string): string {
  if (pattern === HARD_LINK) {
    return 'is a hard link (the same file has other names, which may be outside the workspace or hold secrets)';
  }
  const setting = quote === '`' ? '`agentread.sensitiveFiles`' : 'agentread.sensitiveFiles';
  return `matches ${quote}${pattern}${quote} in the ${setting} setting`;
}

/** Why one file needs approval, in words. */
function why(check: ConsentCheck): string {
  return [
    check.outsideWorkspace ? 'outside the workspace' : '',
    check.sensitivePattern !== undefined ? sensitiveWhy(check.sensitivePattern, '"') : '',
  ]
    .filter(Boolean)
    .join(' and ');
}

/** The buttons of agentread's own question, and what each allows. */
export interface GrantQuestion {
  message: string;
  detail: string;
  allowFile: string;
  allowFolder: string;
  deny: string;
}

/**
 * agentread's own question about the files of one call that no grant covers yet (a modal dialog, plain text):
 * it names each file and why, and says what each answer allows and for how long.
 */
export function grantQuestion(checks: readonly ConsentCheck[], folderOf: (check: ConsentCheck) => string): GrantQuestion {
  const one = checks.length === 1;
  const files = checks.map((check) => `${check.resolvedPath} (${why(check)})`);
  const folders = [...new Set(checks.map(folderOf))];
  const kinds = [
    checks.some((check) => check.outsideWorkspace) ? 'outside the workspace' : '',
    checks.some((check) => check.sensitivePattern !== undefined) ? 'sensitive' : '',
  ]
    .filter(Boolean)
    .join(' or ');
  return {
    message: one
      ? `Send ${checks[0].resolvedPath} to the language model?`
      : `Send these ${checks.length} files to the language model?`,
    detail:
      `The agent wants to read ${one ? 'this file' : 'these files'}:\n${files.join('\n')}\n\n` +
      `${one ? 'Allow This File' : 'Allow These Files'}: ${one ? 'this file' : 'these files'}, until this window ` +
      'is closed or reloaded.\n' +
      `Allow Folder for This Session: every file under ${folders.join(', ')} that is ${kinds}, until this window is ` +
      'closed or reloaded.\n' +
      'Deny: nothing is read; the agent is told you declined.',
    allowFile: one ? 'Allow This File' : 'Allow These Files',
    allowFolder: 'Allow Folder for This Session',
    deny: 'Deny',
  };
}

/** What the model is told when the user declined agentread's question about `checks` (a sentence). */
export function declinedText(checks: readonly ConsentCheck[]): string {
  const files = checks.map((check) => `${check.path} (${why(check)})`).join(', ');
  const [it, file, was] = checks.length === 1 ? ['it', 'this file', 'it was'] : ['them', 'these files', 'they were'];
  return (
    `The user declined to let you read ${files}: ${was} not read. Do not try to reach ${file} another way; ` +
    `go on without ${it}, or ask the user to share what you need.`
  );
}
