// Lint rules for the extension's TypeScript and the test runners' JavaScript: the recommended sets of ESLint
// and typescript-eslint, checked by the README's test command.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['extension/out/**', 'extension/dist/**', 'extension/bundled/**', 'node_modules/**', '.vscode-test/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
      // An argument a callback must accept but does not use is named with a leading underscore.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // Tests match numbered lines as the model sees them, the number right-aligned in six columns.
      'no-regex-spaces': 'off',
    },
  },
  {
    // A test extension loaded by VS Code as it is, in CommonJS.
    files: ['**/*.js'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', setTimeout: 'readonly',
        clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', URL: 'readonly',
        window: 'readonly', document: 'readonly', __dirname: 'readonly', require: 'readonly', module: 'writable' },
    },
  },
);
