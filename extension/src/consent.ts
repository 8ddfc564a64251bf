// When a read needs the user's approval: a path outside every workspace folder, or a sensitive file.
// The server enforces the same rules (it refuses such reads without `consent: true`, see
// python/agentread/workspace.py); the tool applies them first so it can ask the user. No `vscode` import,
// so the unit tests check it directly.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export interface ConsentCheck {
  /** The path the read resolves to, symbolic links followed. */
  resolvedPath: string;
  outsideWorkspace: boolean;
  /** The setting's glob that marks the file sensitive, if one does. */
  sensitivePattern?: string;
}

/** The path as the server takes it: `file://` URIs and `~` understood, relative to the first workspace folder. */
export function resolveRequestedPath(requested: string, folders: readonly string[]): string {
  let raw = requested;
  if (raw.startsWith('file://')) {
    try {
      raw = decodeURIComponent(new URL(raw).pathname);
    } catch {
      // not a URI after all: taken as a path
    }
  }
  if (raw === '~' || raw.startsWith('~/')) {
    raw = path.join(os.homedir(), raw.slice(1));
  }
  if (path.isAbsolute(raw)) {
    return path.normalize(raw);
  }
  return path.resolve(folders[0] ?? process.cwd(), raw);
}

/** realpath of the longest existing prefix, with the rest appended: a missing file still resolves. */
export function realPathOfNearest(target: string): string {
  let existing = target;
  const rest: string[] = [];
  for (;;) {
    try {
      return path.join(fs.realpathSync.native(existing), ...rest);
    } catch {
      const parent = path.dirname(existing);
      if (parent === existing) {
        return target;
      }
      rest.unshift(path.basename(existing));
      existing = parent;
    }
  }
}

function isInside(child: string, parent: string): boolean {
  const relative = path.relative(parent, child);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

/** A shell-style glob as a regular expression, as Python's fnmatch reads it: `*` also crosses `/`. */
export function globToRegExp(glob: string): RegExp {
  let source = '';
  for (let i = 0; i < glob.length; i++) {
    const char = glob[i];
    if (char === '*') {
      source += '.*';
    } else if (char === '?') {
      source += '.';
    } else if (char === '[') {
      const close = glob.indexOf(']', glob[i + 1] === '!' || glob[i + 1] === ']' ? i + 2 : i + 1);
      if (close < 0) {
        source += '\\[';
      } else {
        let body = glob.slice(i + 1, close).replace(/\\/g, '\\\\');
        if (body.startsWith('!')) {
          body = '^' + body.slice(1);
        } else if (body.startsWith('^')) {
          body = '\\' + body;
        }
        source += `[${body}]`;
        i = close;
      }
    } else {
      source += char.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    }
  }
  return new RegExp(`^${source}$`, 's');
}

/** The names a sensitive pattern is tried against: file name, workspace-relative path, last two components. */
function candidateNames(file: string, roots: readonly string[]): string[] {
  const names = [path.basename(file)];
  const real = realPathOfNearest(file);
  const root = roots.find((candidate) => real.startsWith(candidate.replace(/[\\/]+$/, '') + path.sep));
  if (root) {
    names.push(path.relative(root, real).split(path.sep).join('/'));
  }
  names.push(file.split(path.sep).join('/').split('/').slice(-2).join('/'));
  return names;
}

/** The first pattern that matches the requested path or the file it leads to. */
export function sensitivePatternFor(
  requested: string,
  resolved: string,
  roots: readonly string[],
  patterns: readonly string[],
): string | undefined {
  const names = [...candidateNames(requested, roots), ...candidateNames(resolved, roots)];
  return patterns.find((pattern) => {
    const regexp = globToRegExp(pattern);
    return names.some((name) => regexp.test(name));
  });
}

function isDirectory(file: string): boolean {
  try {
    return fs.statSync(file).isDirectory();
  } catch {
    return false;
  }
}

function exists(file: string): boolean {
  return fs.existsSync(file);
}

/** Decides whether reading `requested` needs the user's approval, by the rules the server applies. */
export function checkConsent(
  requested: string,
  folders: readonly string[],
  sensitivePatterns: readonly string[],
): ConsentCheck {
  const absolute = resolveRequestedPath(requested, folders);
  const resolvedPath = realPathOfNearest(absolute);
  const roots = folders.map((folder) => realPathOfNearest(path.resolve(folder)));
  const outsideWorkspace = !roots.some((root) => isInside(resolvedPath, root));
  // Like the server: a missing file is "not found" and a directory listing holds no secrets.
  const sensitivePattern =
    exists(resolvedPath) && !isDirectory(resolvedPath)
      ? sensitivePatternFor(absolute, resolvedPath, roots, sensitivePatterns)
      : undefined;
  return { resolvedPath, outsideWorkspace, sensitivePattern };
}

export function needsConsent(check: ConsentCheck): boolean {
  return check.outsideWorkspace || check.sensitivePattern !== undefined;
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

/**
 * Whether an entry of a read of many files is a glob, as the server decides: it holds a wildcard and no file
 * has that name. The server expands globs inside the workspace only, so a glob itself needs no approval.
 */
export function isGlob(requested: string, folders: readonly string[]): boolean {
  if (!/[*?[]/.test(requested)) {
    return false;
  }
  try {
    fs.lstatSync(resolveRequestedPath(requested, folders));
    return false;
  } catch {
    return true;
  }
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
