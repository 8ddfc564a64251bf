// Installs the engine's Python dependencies (pyproject.toml [project].dependencies) into
// extension/bundled/libs/cp3XY, once per supported Python version, as binary wheels for one target
// platform, then moves what is identical for every version to extension/bundled/libs/common. The server
// puts cp3XY (its interpreter's version) and common on PYTHONPATH, so users need no pip step. Needs the
// PyPI registry (or a pip index configured for pip) at packaging time only.
//
//   node extension/scripts/bundle-python.mjs [--target linux-x64] [--python-versions 3.10,3.11,3.12,3.13] [--force]

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const libs = path.join(root, 'extension', 'bundled', 'libs');

/** The Python versions a .vsix supports out of the box: requires-python's floor to the newest stable. */
export const PYTHON_VERSIONS = ['3.10', '3.11', '3.12', '3.13'];

/** pip platform tags per VS Code target. manylinux_2_28 covers Debian 10+, Ubuntu 18.10+, RHEL 8+. */
const PLATFORMS = {
  'linux-x64': ['manylinux_2_28_x86_64', 'manylinux2014_x86_64'],
  'linux-arm64': ['manylinux_2_28_aarch64', 'manylinux2014_aarch64'],
  'darwin-x64': ['macosx_10_13_x86_64', 'macosx_10_12_x86_64', 'macosx_10_9_x86_64'],
  'darwin-arm64': ['macosx_11_0_arm64'],
  'win32-x64': ['win_amd64'],
};

function argument(name, fallback) {
  const index = process.argv.indexOf(name);
  return index >= 0 ? process.argv[index + 1] : fallback;
}

export function bundle(target, { versions = PYTHON_VERSIONS, force = false, python = process.env.AGENTREAD_PYTHON || 'python3' } = {}) {
  const platforms = PLATFORMS[target];
  if (!platforms) {
    throw new Error(`unknown target ${target}; one of ${Object.keys(PLATFORMS).join(', ')}`);
  }
  buildScanModule(target, python);
  const dependencies = execFileSync(
    python,
    ['-c', 'import json, tomllib; print(json.dumps(tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]))'],
    { cwd: root, encoding: 'utf8' },
  );
  const requirements = JSON.parse(dependencies);
  // The requirements are part of the stamp: a dependency added to pyproject.toml is bundled next time.
  const stamp = path.join(libs, 'BUNDLED');
  const wanted = `${target} ${versions.join(',')} ${requirements.join(' ')}`;
  if (!force && fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8').trim() === wanted) {
    console.log(`Python libraries for ${target} ${versions.join(',')} already bundled in ${libs}`);
    return;
  }
  fs.rmSync(libs, { recursive: true, force: true });
  for (const version of versions) {
    const dest = path.join(libs, `cp${version.replace('.', '')}`);
    console.log(`Bundling ${requirements.join(', ')} for Python ${version} (${target}) into ${dest}`);
    execFileSync(
      python,
      [
        '-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-compile',
        '--target', dest, '--only-binary=:all:', '--implementation', 'cp', '--python-version', version,
        ...platforms.flatMap((platform) => ['--platform', platform]),
        ...requirements,
      ],
      { cwd: root, stdio: 'inherit' },
    );
    // Console scripts carry this machine's interpreter path and are not used by the server.
    fs.rmSync(path.join(dest, 'bin'), { recursive: true, force: true });
  }
  shareCommon(versions);
  // Each version directory must exist in the .vsix even when everything in it could be shared: the server
  // takes its presence to mean "bundled for this version".
  for (const version of versions) {
    fs.writeFileSync(path.join(libs, `cp${version.replace('.', '')}`, 'BUNDLED'), `${wanted}\n`);
  }
  fs.writeFileSync(stamp, `${wanted}\n`);
}

/**
 * Compiles the engine's one C module, its loops over every byte of a file (setup.py), into python/agentread
 * when packaging for this machine's platform: built on the stable ABI, it serves every Python version. A
 * package for another platform goes without it (a build left from this platform is removed, as it could not
 * load there), and does the same in Python, several times slower.
 */
function buildScanModule(target, python) {
  const host = `${process.platform}-${process.arch}`;
  const engine = path.join(root, 'python', 'agentread');
  if (target !== host) {
    for (const name of fs.readdirSync(engine).filter((file) => /^_scan\..*\.(so|pyd)$/.test(file))) {
      fs.rmSync(path.join(engine, name));
    }
    console.warn(`Packaging for ${target} on ${host}: the engine's C module is not compiled for ${target} `
      + '(pip install -e . builds it again for this machine)');
    return;
  }
  try {
    execFileSync(python, ['setup.py', '--quiet', 'build_ext', '--inplace'], { cwd: root, stdio: 'inherit' });
  } catch (error) {
    throw new Error(`compiling the engine's C module failed (${error.message}): install a C compiler and the `
      + 'Python headers (Debian: build-essential python3-dev), or package for another platform');
  }
}

/** A digest of a file or directory tree: names and contents. */
function digest(entry) {
  const hash = createHash('sha256');
  const walk = (current, name) => {
    const stat = fs.lstatSync(current);
    hash.update(`${name}\0${stat.isDirectory() ? 'd' : 'f'}\0`);
    if (stat.isDirectory()) {
      for (const child of fs.readdirSync(current).sort()) {
        walk(path.join(current, child), `${name}/${child}`);
      }
    } else {
      hash.update(fs.readFileSync(current));
    }
  };
  walk(entry, '.');
  return hash.digest('hex');
}

/** Extension modules below `dir` (recursively). */
function extensionModules(dir) {
  const found = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      found.push(...extensionModules(full));
    } else if (/\.(so|pyd|dylib)$/.test(entry.name)) {
      found.push(full);
    }
  }
  return found;
}

/**
 * Moves what every Python version can share into libs/common: top-level entries that are the same for each
 * version (whole entries: a package cannot be split across sys.path entries), and top-level extension
 * modules tagged with their Python version (`_x.cpython-312-….so`), whose names cannot clash. A `*.libs`
 * directory of shared libraries is moved only when nothing left behind refers to it, since extension
 * modules find it through an rpath relative to their own directory.
 */
function shareCommon(versions) {
  const dirs = versions.map((version) => path.join(libs, `cp${version.replace('.', '')}`));
  const common = path.join(libs, 'common');
  fs.mkdirSync(common, { recursive: true });
  let moved = 0;
  for (const dir of dirs) {
    for (const name of fs.readdirSync(dir)) {
      if (/\.cpython-3\d+-[^/]*\.(so|pyd)$/.test(name)) {
        fs.renameSync(path.join(dir, name), path.join(common, name));
        moved++;
      }
    }
  }
  const same = (name) => {
    if (!dirs.every((dir) => fs.existsSync(path.join(dir, name)))) {
      return false;
    }
    const first = digest(path.join(dirs[0], name));
    return dirs.slice(1).every((dir) => digest(path.join(dir, name)) === first);
  };
  const names = fs.readdirSync(dirs[0]);
  for (const name of names.filter((candidate) => !candidate.endsWith('.libs'))) {
    if (same(name)) {
      fs.renameSync(path.join(dirs[0], name), path.join(common, name));
      dirs.slice(1).forEach((dir) => fs.rmSync(path.join(dir, name), { recursive: true, force: true }));
      moved++;
    }
  }
  const remaining = dirs.flatMap((dir) => extensionModules(dir).map((file) => fs.readFileSync(file)));
  for (const name of names.filter((candidate) => candidate.endsWith('.libs'))) {
    if (same(name) && !remaining.some((bytes) => bytes.includes(name))) {
      fs.renameSync(path.join(dirs[0], name), path.join(common, name));
      dirs.slice(1).forEach((dir) => fs.rmSync(path.join(dir, name), { recursive: true, force: true }));
      moved++;
    }
  }
  console.log(`${moved} entries that every Python version can share moved to ${common}`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  bundle(argument('--target', 'linux-x64'), {
    versions: argument('--python-versions', PYTHON_VERSIONS.join(',')).split(','),
    force: process.argv.includes('--force'),
  });
}
