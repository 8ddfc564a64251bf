// Bundles the extension into one file (extension/dist/extension.js) with its runtime dependencies, so the
// .vsix carries no node_modules. `vscode` is provided by the editor.
import * as esbuild from 'esbuild';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

await esbuild.build({
  absWorkingDir: root,
  entryPoints: ['extension/src/extension.ts'],
  outfile: 'extension/dist/extension.js',
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  external: ['vscode'],
  sourcemap: 'linked',
  logLevel: 'info',
});
