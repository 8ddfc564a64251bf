// Installs the engine's Python dependencies (pyproject.toml [project].dependencies) into
// extension/bundled/libs/cp3XY, once per supported Python version, as binary wheels for one target
// platform, then moves what is identical for every version to extension/bundled/libs/common. The server
// puts cp3XY (its interpreter's version) and common on PYTHONPATH, so users need no pip step. Needs the
// PyPI registry at packaging time only.
//
// uv resolves for each version and platform: pip's --python-version picks wheels for the target but
// evaluates dependency markers for the interpreter running it, so a bundle for 3.10 made by a 3.11 went
// without cattrs' `exceptiongroup; python_version < '3.11'` and the server did not start. uv is taken from
// the interpreter (`python -m uv`), else installed with pip into build/uv. Each version's bundle is then
// tried by that Python, where this machine has it (`python3.X`): it reads the files in examples/.
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

/** uv's platform per VS Code target. manylinux_2_28 covers Debian 10+, Ubuntu 18.10+, RHEL 8+. */
const PLATFORMS = {
  'linux-x64': 'x86_64-manylinux_2_28',
  'linux-arm64': 'aarch64-manylinux_2_28',
  'darwin-x64': 'x86_64-apple-darwin',
  'darwin-arm64': 'aarch64-apple-darwin',
  'win32-x64': 'x86_64-pc-windows-msvc',
};

/** The uv release installed when the interpreter has none: the first with `--python-platform` for manylinux_2_28. */
const UV_REQUIREMENT = 'uv>=0.5';

function argument(name, fallback) {
  const index = process.argv.indexOf(name);
  return index >= 0 ? process.argv[index + 1] : fallback;
}

// Pure-Python packages that publish no wheel (extract-msg needs red-black-tree-mod), built from their source;
// every other package must come as a wheel, so that nothing is compiled for a platform here.
const FROM_SOURCE = ['red-black-tree-mod'];

export function bundle(target, { versions = PYTHON_VERSIONS, force = false, python = process.env.AGENTREAD_PYTHON || 'python3' } = {}) {
  const platform = PLATFORMS[target];
  if (!platform) {
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
  // "uv": a bundle pip made (its markers evaluated for the wrong Python) is made again.
  const stamp = path.join(libs, 'BUNDLED');
  const wanted = `uv ${target} ${versions.join(',')} ${requirements.join(' ')}`;
  if (!force && fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8').trim() === wanted) {
    console.log(`Python libraries for ${target} ${versions.join(',')} already bundled in ${libs}`);
    return;
  }
  const uv = uvCommand(python);
  fs.rmSync(libs, { recursive: true, force: true });
  for (const version of versions) {
    const dest = versionDir(version);
    console.log(`Bundling ${requirements.join(', ')} for Python ${version} (${target}) into ${dest}`);
    execFileSync(
      uv[0],
      [
        ...uv.slice(1), 'pip', 'install', '--quiet', '--no-config', '--no-compile', '--target', dest,
        '--only-binary', ':all:', ...FROM_SOURCE.flatMap((name) => ['--no-binary', name]),
        '--python-version', version, '--python-platform', platform,
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
    fs.writeFileSync(path.join(versionDir(version), 'BUNDLED'), `${wanted}\n`);
  }
  if (target === `${process.platform}-${process.arch}`) {
    checkBundles(versions);
  }
  fs.writeFileSync(stamp, `${wanted}\n`);
}

function versionDir(version) {
  return path.join(libs, `cp${version.replace('.', '')}`);
}

/** The command that runs uv: the interpreter's own, else one pip installs into build/uv. */
function uvCommand(python) {
  try {
    execFileSync(python, ['-m', 'uv', '--version'], { stdio: 'ignore' });
    return [python, '-m', 'uv'];
  } catch {
    // not installed for this interpreter
  }
  const dir = path.join(root, 'build', 'uv');
  const bin = path.join(dir, 'bin', process.platform === 'win32' ? 'uv.exe' : 'uv');
  if (!fs.existsSync(bin)) {
    console.log(`Installing ${UV_REQUIREMENT} into ${dir} to resolve the libraries for each Python version`);
    execFileSync(
      python,
      ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--target', dir, UV_REQUIREMENT],
      { cwd: root, stdio: 'inherit' },
    );
  }
  return [bin];
}

/**
 * Reads every file in examples/ (text, PDF, image, notebook, Word, Excel, PowerPoint: every reader and the
 * library it loads) with the engine's C module, in one Python process per version.
 */
const CHECK_SCRIPT = [
  'import contextlib, io, os, sys',
  'import agentread._scan',
  'from agentread.cli import main',
  'for name in sorted(os.listdir(sys.argv[1])):',
  '    out = io.StringIO()',
  '    with contextlib.redirect_stdout(out):',
  '        code = main(["read", name, "--root", sys.argv[1]])',
  '    if code != 0:',
  '        sys.exit(f"reading {name} failed ({code}):\\n{out.getvalue()}")',
].join('\n');

/**
 * Runs CHECK_SCRIPT with each version's bundle, in that Python where this machine has it (`python3.X` on
 * the PATH), without its own site-packages (-S), as the server finds its libraries in the .vsix. A library
 * missing from a bundle fails the packaging here rather than the server on a user's machine.
 */
function checkBundles(versions) {
  for (const version of versions) {
    const interpreter = `python${version}`;
    const env = {
      ...process.env,
      PYTHONPATH: [path.join(root, 'python'), versionDir(version), path.join(libs, 'common')].join(path.delimiter),
    };
    try {
      execFileSync(interpreter, ['-S', '-c', 'pass'], { stdio: 'ignore', env });
    } catch {
      console.warn(`No ${interpreter} on this machine: the bundle for Python ${version} is not checked`);
      continue;
    }
    try {
      execFileSync(interpreter, ['-S', '-c', CHECK_SCRIPT, path.join(root, 'examples')], { env, stdio: 'pipe' });
    } catch (error) {
      throw new Error(`the bundle for Python ${version} does not work with ${interpreter}:\n${error.stderr}`);
    }
    console.log(`Python ${version}: the examples read with the bundled libraries and the C module`);
  }
}

/**
 * Compiles the engine's one C module, its loops over a file's bytes and a PDF page's objects (setup.py), into
 * python/agentread when packaging for this machine's platform: built on the stable ABI, it serves every Python version. A
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
  const dirs = versions.map(versionDir);
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
