// What the user allowed the agent to read, for this window's session: files, or folders, each for the reasons
// the user was told (outside the workspace, sensitive). A chat's approval of the tool is no such grant: VS Code
// skips a tool's confirmation for every later call once it was approved for the session, the workspace or
// always, so a path reaches the model only once the user allowed that path in agentread's own question.
// No `vscode` import, so the unit tests check it as it is.

import * as path from 'node:path';
import type { ConsentCheck } from './consent';

/** Why a read needs the user's approval, in the server's words (`agentread/check`). */
export type Reason = 'outside_workspace' | 'sensitive_file';

/** What the user answers agentread's question with. */
export type Answer = 'file' | 'folder' | 'deny';

interface Grant {
  /** The real path of the file, or of the folder whose files (at any depth) it allows. */
  path: string;
  folder: boolean;
  reasons: ReadonlySet<Reason>;
}

export function reasonsOf(check: ConsentCheck): Reason[] {
  const reasons: Reason[] = [];
  if (check.outsideWorkspace) {
    reasons.push('outside_workspace');
  }
  if (check.sensitivePattern !== undefined) {
    reasons.push('sensitive_file');
  }
  return reasons;
}

/** The folder an "allow this folder" answer allows for a file: the one holding it. */
export function folderOf(check: ConsentCheck): string {
  return path.dirname(check.resolvedPath);
}

export class ConsentGrants {
  private readonly grants: Grant[] = [];

  /** Whether the user allowed this read: a grant of its file or of a folder above it covers every reason. */
  covers(check: ConsentCheck): boolean {
    return reasonsOf(check).every((reason) => this.grants.some((grant) => grant.reasons.has(reason) && within(check.resolvedPath, grant)));
  }

  /** The checks no grant covers: what must still be asked. */
  uncovered(checks: readonly ConsentCheck[]): ConsentCheck[] {
    return checks.filter((check) => !this.covers(check));
  }

  /** Records the user's answer about `checks`: each file, or each one's folder, for the reasons asked. */
  record(answer: Answer, checks: readonly ConsentCheck[]): void {
    if (answer === 'deny') {
      return;
    }
    for (const check of checks) {
      const folder = answer === 'folder';
      this.grants.push({ path: folder ? folderOf(check) : check.resolvedPath, folder, reasons: new Set(reasonsOf(check)) });
    }
  }

  /** Forgets every grant. */
  clear(): void {
    this.grants.length = 0;
  }
}

function within(file: string, grant: Grant): boolean {
  if (!grant.folder) {
    return file === grant.path;
  }
  const prefix = grant.path.endsWith(path.sep) ? grant.path : grant.path + path.sep;
  return file.startsWith(prefix);
}
