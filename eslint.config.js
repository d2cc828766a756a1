// Lint: typescript-eslint's recommended rules plus the import boundaries of ARCHITECTURE.md
// (rest, tools/mcp.ts, cli, web → tools → index, crawler, state → config, errors). Type checking is `npm run typecheck`.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const boundary = (from, forbidden) => ({
  files: [`${from}/**/*.ts`],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: forbidden.map((f) => ({ group: [`**/${f}/*`, `../${f}/*`, `./${f}/*`], message: `${from}/ may not import ${f}/ (see ARCHITECTURE.md)` })),
      },
    ],
  },
});

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'data/**', 'test-output/**', '.tap/**', '.scratch*/**', 'web/static/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2023, sourceType: 'module', globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', fetch: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  boundary('index', ['crawler', 'tools', 'rest', 'cli', 'web']),
  boundary('crawler', ['index', 'tools', 'rest', 'cli', 'web']),
  boundary('state', ['index', 'crawler', 'tools', 'rest', 'cli', 'web']),
  boundary('tools', ['rest', 'cli', 'web', 'webmaster']),
  // The webmaster foundation is not exposed (issue 11): no adapter may reach it; it reaches no adapter.
  boundary('webmaster', ['tools', 'rest', 'cli', 'web']),
  boundary('rest', ['webmaster', 'cli']),
  boundary('web', ['webmaster', 'cli']),
);
