// Builds the .vsix: bundles the extension, bundles the Python libraries for the target platform, then runs
// vsce offline. The result is agentread-<target>-<version>.vsix in the repository root.
//
//   npm run package [-- --target linux-x64] [--python-versions 3.10,3.11,3.12,3.13] [--out file.vsix] [--force]
//
// With no arguments it builds what is published, and what the end-to-end tests install: linux-x64, every
// Python version in PYTHON_VERSIONS. --force bundles the Python libraries again even when they are current.

import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundle, PYTHON_VERSIONS } from './bundle-python.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));

export const DEFAULT_TARGET = 'linux-x64';

/** Where a .vsix for `target` is written when no --out is given. */
export function vsixPath(target = DEFAULT_TARGET) {
  const { version } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  return path.join(root, `agentread-${target}-${version}.vsix`);
}

function argument(name, fallback) {
  const index = process.argv.indexOf(name);
  return index >= 0 ? process.argv[index + 1] : fallback;
}

function main() {
  const target = argument('--target', DEFAULT_TARGET);
  const versions = argument('--python-versions', PYTHON_VERSIONS.join(',')).split(',');
  const out = path.resolve(argument('--out', vsixPath(target)));

  execFileSync(process.execPath, [path.join(root, 'extension', 'scripts', 'build.mjs')], { cwd: root, stdio: 'inherit' });
  bundle(target, { versions, force: process.argv.includes('--force') });
  execFileSync(
    process.execPath,
    [
      path.join(root, 'node_modules', '@vscode', 'vsce', 'vsce'),
      'package',
      '--no-dependencies',
      '--skip-license',
      '--allow-missing-repository',
      '--no-rewrite-relative-links',
      '--target', target,
      '--out', out,
    ],
    { cwd: root, stdio: 'inherit' },
  );
  console.log(out);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  main();
}
