// Builds the .vsix: bundles the extension, bundles the Python libraries for the target platform, then runs
// vsce offline. The result is agentread-<target>-<version>.vsix in the repository root.
//
//   npm run package [-- --target linux-x64] [--python-versions 3.10,3.11,3.12,3.13] [--out file.vsix]
//
// A build for fewer Python versions is smaller and much faster to make (the tests use one for the local
// interpreter); the full set is what is published.

import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundle, PYTHON_VERSIONS } from './bundle-python.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
function argument(name, fallback) {
  const index = process.argv.indexOf(name);
  return index >= 0 ? process.argv[index + 1] : fallback;
}

const target = argument('--target', 'linux-x64');
const versions = argument('--python-versions', PYTHON_VERSIONS.join(',')).split(',');
const { version } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const out = path.resolve(argument('--out', path.join(root, `agentread-${target}-${version}.vsix`)));

execFileSync(process.execPath, [path.join(root, 'extension', 'scripts', 'build.mjs')], { cwd: root, stdio: 'inherit' });
bundle(target, { versions });
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
