import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'data/**', 'coverage/**', 'src/client/openapi.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // The dashboard's browser scripts: browser globals, no Node.
    files: ['public/**/*.js'],
    languageOptions: { sourceType: 'script', globals: { document: 'readonly', navigator: 'readonly', window: 'readonly', setTimeout: 'readonly', fetch: 'readonly', URLSearchParams: 'readonly' } },
  },
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', URL: 'readonly', Buffer: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', setImmediate: 'readonly', fetch: 'readonly', performance: 'readonly', AbortController: 'readonly', AbortSignal: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
);
