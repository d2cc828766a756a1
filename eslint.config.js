// Lint: typescript-eslint's recommended rules plus the import rules of every folder and top-level module: each
// folder README's "May import" line, as an allowlist (ARCHITECTURE.md's layering: rest, tools/mcp.ts, cli, web → tools
// → index, crawler, state → config, errors; nothing imports an adapter). Type checking is `npm run typecheck`.
import js from '@eslint/js';
import { dirname, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import tseslint from 'typescript-eslint';

const ROOT = dirname(fileURLToPath(import.meta.url));

/** Sub-folders that are areas of their own, each with its README's "May import" line (index/README.md). */
const SUB_AREAS = ['index/retrieval', 'index/engines/lance', 'index/engines/memory', 'index/serving', 'index/shards'];

/**
 * The area a repo-relative path belongs to: a sub-area (`index/retrieval`), else its top-level folder (`index`), or
 * the file itself for a top-level module (`config.ts`); null outside the repo (libraries, ../shared/data).
 */
const areaOf = (rel) =>
  rel.startsWith('..') || rel === ''
    ? null
    : (SUB_AREAS.find((a) => rel.startsWith(`${a}/`)) ?? (rel.includes('/') ? rel.slice(0, rel.indexOf('/')) : rel));

/**
 * `svc/import-boundaries`: every relative import (static, dynamic, re-export, `import()` type) of a file is resolved
 * and allowed only when it stays in the file's own area or reaches an entry of `may`: an area (`state`,
 * `config.ts`), one file (`crawler/directives.ts`), or a sub-folder (`test/helpers/`). An allowlist, so a new edge is
 * a decision written here and in the README, never an accident.
 */
const importBoundaries = {
  meta: {
    type: 'problem',
    schema: [{ type: 'object', properties: { may: { type: 'array', items: { type: 'string' } } }, additionalProperties: false }],
    messages: { outside: '{{from}} may not import {{target}} (its README says what it may import; ARCHITECTURE.md)' },
  },
  create(context) {
    const may = context.options[0]?.may ?? [];
    const from = areaOf(relative(ROOT, context.filename).split(sep).join('/'));
    const check = (node) => {
      const spec = node?.value;
      if (typeof spec !== 'string' || !spec.startsWith('.')) return;
      const target = relative(ROOT, resolve(dirname(context.filename), spec))
        .split(sep)
        .join('/')
        .replace(/\.js$/, '.ts');
      const area = areaOf(target);
      if (area === null || area === from) return;
      // An area allowed whole (`index`) includes its sub-areas (`index/retrieval`).
      if (may.some((m) => m === area || area.startsWith(`${m}/`) || m === target || (m.endsWith('/') && target.startsWith(m)))) return;
      context.report({ node, messageId: 'outside', data: { from: from ?? '?', target } });
    };
    return {
      ImportDeclaration: (n) => check(n.source),
      ExportNamedDeclaration: (n) => check(n.source),
      ExportAllDeclaration: (n) => check(n.source),
      ImportExpression: (n) => n.source.type === 'Literal' && check(n.source),
      TSImportType: (n) => check(n.argument?.type === 'TSLiteralType' ? n.argument.literal : n.argument),
    };
  },
};
const svc = { rules: { 'import-boundaries': importBoundaries } };

/** The import rule of `from` (a folder, or one file: a later entry overrides an earlier one for that file). */
const boundary = (from, may) => ({
  files: from.endsWith('.ts') ? [from] : [`${from}/**/*.ts`], // '*.ts': the top-level modules only
  plugins: { svc },
  rules: { 'svc/import-boundaries': ['error', { may }] },
});

const SOURCE = ['cli', 'crawler', 'index', 'rest', 'state', 'tools', 'web', 'webmaster'];
const MODULES = [
  'main.ts',
  'config.ts',
  'errors.ts',
  'logger.ts',
  'page-model.ts',
  'canada.ts',
  'schema-org-types.ts',
  'event-loop.ts',
  'worker-thread.ts',
];
const CLI = ['tools', 'index', 'crawler', 'state', 'main.ts', 'config.ts', 'errors.ts', 'logger.ts', 'page-model.ts', 'fixtures/test-web/'];

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'data/**', 'test-output/**', '.tap/**', '.scratch*/**', 'web/static/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: 'module',
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        fetch: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  // A top-level module is a leaf (config, errors, logger, page-model, canada, schema-org-types, event-loop, worker-thread import nothing of svc)
  // unless listed below.
  boundary('*.ts', []),
  boundary('index', ['page-model.ts', 'config.ts', 'errors.ts', 'canada.ts', 'schema-org-types.ts', 'event-loop.ts', 'worker-thread.ts']),
  // index/ by role (each folder's README): serving is a leaf; the in-memory engine builds on retrieval's neutral types
  // only; the LanceDB engine composes the rest. Retrieval's engine files are the seam's known leaks (types, one helper),
  // listed one by one so that no other edge grows unnoticed.
  boundary('index/serving', ['config.ts', 'errors.ts', 'event-loop.ts', 'worker-thread.ts']),
  boundary('index/engines/memory', ['index/retrieval', 'errors.ts', 'event-loop.ts']),
  boundary('index/engines/lance', [
    'index/engines/memory',
    'index/retrieval',
    'index/serving',
    'page-model.ts',
    'config.ts',
    'errors.ts',
    'event-loop.ts',
  ]),
  // Shards compose whole engines (index/shards/README.md); LanceDB stays below them.
  boundary('index/shards', [
    'index/engines/lance',
    'index/engines/memory',
    'index/retrieval',
    'index/serving',
    'page-model.ts',
    'rest/body.ts',
  ]),
  boundary('index/retrieval', [
    'index/serving',
    'index/engines/lance/columns.ts',
    'index/engines/memory/dense-slots.ts',
    'page-model.ts',
    'errors.ts',
    'event-loop.ts',
    'canada.ts',
    'schema-org-types.ts',
  ]),
  // Above the LanceDB engine no file imports LanceDB or its Arrow types.
  {
    files: ['index/retrieval/**/*.ts', 'index/engines/memory/**/*.ts', 'index/serving/**/*.ts', 'index/shards/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { paths: ['@lancedb/lancedb', 'apache-arrow'] }] },
  },
  boundary('crawler', ['config.ts', 'errors.ts', 'page-model.ts', 'schema-org-types.ts', 'state', 'event-loop.ts']),
  boundary('state', ['config.ts', 'errors.ts', 'page-model.ts', 'schema-org-types.ts', 'canada.ts']),
  boundary('tools', ['index', 'crawler', 'state', 'config.ts', 'errors.ts', 'page-model.ts', 'logger.ts', 'canada.ts', 'worker-thread.ts']),
  // The webmaster foundation is not exposed (issue 11): no adapter may reach it; it reaches no adapter.
  boundary('webmaster', ['config.ts', 'errors.ts', 'page-model.ts', 'state', 'crawler', 'index']),
  boundary('rest', ['tools', 'state', 'config.ts', 'errors.ts', 'logger.ts']),
  // The pages reach the service through the public REST API only; the directive table is shared (one source).
  boundary('web', ['config.ts', 'crawler/directives.ts']),
  boundary('cli', CLI),
  boundary('cli/webmaster.ts', [...CLI, 'webmaster']),
  // `svc openapi` prints the document rest/ serves, from rest/'s one builder (cli/README.md).
  boundary('cli/openapi.ts', [...CLI, 'rest/openapi.ts']),
  // The composition root: everything but the CLI, the unexposed webmaster foundation and the harnesses.
  boundary('main.ts', ['config.ts', 'errors.ts', 'logger.ts', 'page-model.ts', 'rest', 'tools', 'index', 'crawler', 'state', 'web']),
  // The fixture web shares no code with what it is used to test.
  boundary('fixtures', []),
  boundary('bench', [...SOURCE, ...MODULES, 'fixtures', 'test/helpers/']),
  // The build's scripts import no svc code (a test may check what they generate).
  boundary('scripts', []),
  boundary('test', [...SOURCE, ...MODULES, 'fixtures', 'scripts']),
);
