import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// The layering the tree shows (docs/architecture.md): doors on top, each on its own; services and what they
// stand on never reach up into a door. An import that climbs fails `npm run lint`.
const door = (...names) => ({ regex: `(^|/)(${names.join('|')})/`, message: 'A door never imports another door (docs/architecture.md): move what both need down, into services/ or http/.' });
const noDoors = { regex: '(^|/)(api|dashboard|cli|worker|http)/|(^|/)\\.\\./(\\.\\./)*(app|server|container)\\.js$', message: 'Below the doors (docs/architecture.md): services, schemas, db and the rest never import a door, the web shell or the composition root.' };
const layering = (files, ...patterns) => ({ files, rules: { 'no-restricted-imports': ['error', { patterns }] } });

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
  layering(['src/api/**'], door('dashboard', 'cli', 'worker'), { regex: '(^|/)server\\.js$', message: 'The API door does not start processes.' }),
  layering(['src/dashboard/**'], door('api', 'cli', 'worker'), { regex: '(^|/)server\\.js$', message: 'The dashboard door does not start processes.' }),
  layering(['src/cli/**'], door('api', 'dashboard', 'worker')),
  layering(['src/worker/**'], door('api', 'dashboard', 'cli', 'http'), { regex: '(^|/)(app|server)\\.js$', message: 'The worker door runs without the web app.' }),
  layering(['src/http/**'], door('api', 'dashboard', 'cli', 'worker'), { regex: '(^|/)(app|server|container)\\.js$', message: 'http/ is what the web doors share: it stands below them.' }),
  layering(['src/services/**', 'src/schemas/**', 'src/delivery/**', 'src/mail/**', 'src/billing/**', 'src/sso/**', 'src/redis/**', 'src/rate-limit/**', 'src/tracing/**', 'src/db/**'], noDoors),
  layering(['src/schemas/**'], noDoors, { regex: '(^|/)services/', message: 'Schemas stand below the services: a service imports its shape, never the reverse.' }),
  layering(['src/db/**'], noDoors, { regex: '(^|/)(services|schemas|delivery|mail|billing|sso|redis|rate-limit|tracing)/', message: 'db/ stands on lib/ alone.' }),
  layering(['src/db/repositories/**'], { regex: '^\\.\\./\\.\\./(?!lib/)', message: 'Repositories import only db/ (and lib/).' }),
  layering(['src/lib/**'], { regex: '^\\.\\./', message: 'lib/ is the ground floor: it imports nothing else of src/.' }),
);
