/**
 * Schemathesis' positive phase against a real svc on loopback (issue 46 item 3: the OpenAPI document states every
 * bound and format the server enforces, so values generated from it are never refused with 422). Not a benchmark: a
 * tool run, started by bench/schemathesis.sh, which installs schemathesis in a venv and passes its `st` here.
 *
 *   sh bench/schemathesis.sh [--max-examples N] [--seed S] [--workers W] [--har FILE]
 *
 * The server is the one `svc serve` builds (createServices + startServer) in a temp data dir, crawler off, svc_images
 * on (so its route is served, not 404), one key with quotas no run reaches, a few pages indexed so searches find
 * something. Names never reach DNS: the submission check's lookups answer "no such name" in process. Every request
 * schemathesis made is read back from its HAR report and counted by status; the exit code is 1 when any was a 422
 * or a 5xx, and each of those is printed with its request.
 */
import '../fixtures/loopback-only.js';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import type { LookupFn } from '../crawler/resolver.js';
import { setLanceCpuThreads } from '../index/engines/lance/lance-threads.js';
import { createLogger } from '../logger.js';
import { createServices, startServer } from '../main.js';
import { makePage } from '../test/helpers/page-input.js';

setLanceCpuThreads();

const { values: args } = parseArgs({
  options: {
    st: { type: 'string' },
    'max-examples': { type: 'string', default: '50' },
    seed: { type: 'string', default: '46' },
    workers: { type: 'string', default: '2' },
    /** Where to keep schemathesis' HAR report (every request and answer); default: removed with the temp dir. */
    har: { type: 'string' },
  },
});
const st = args.st;
if (!st) {
  process.stderr.write('usage: sh bench/schemathesis.sh (it passes --st <path of schemathesis st>)\n');
  process.exit(2);
}

const dataDir = mkdtempSync(join(tmpdir(), 'svc-schemathesis-'));
const config = loadConfig({
  env: {},
  flags: {
    dataDir,
    host: '127.0.0.1',
    port: 0,
    crawl: false,
    logLevel: 'warn',
    images: true,
    submissionsPerDay: 1_000_000,
    searchThreads: 0,
  },
});
const offline: LookupFn = async (host) => {
  throw Object.assign(new Error(`no DNS in this run: ${host}`), { code: 'ENOTFOUND' });
};
const services = await createServices(config, { log: createLogger({ level: 'warn' }), lookup: offline });
const { key } = await services.keys.create({ name: 'schemathesis', perMinute: 1_000_000, perDay: 100_000_000 });
await services.deps.index.upsertPages([
  makePage(1, 'www.canada.ca', ['Passport renewal by mail for adults living in Canada', 'Fees and forms for a passport']),
  makePage(2, 'www.ontario.ca', ['Driver licence renewal in Ontario', 'Road tests and licence classes']),
  makePage(3, 'news.example.com', ['Library hours and events this week']),
]);
const running = await startServer(services);

const report = args.har ?? join(dataDir, 'schemathesis.har');
const command = [
  'run',
  'docs/openapi.json',
  '--url',
  running.url,
  '--mode',
  'positive',
  '--phases',
  'examples,coverage,fuzzing',
  '--max-examples',
  args['max-examples'],
  '--seed',
  args.seed,
  '--workers',
  args.workers,
  '--checks',
  'not_a_server_error',
  '--header',
  `Authorization: Bearer ${key}`,
  '--request-timeout',
  '30',
  '--report',
  'har',
  '--report-har-path',
  report,
  '--output-sanitize',
  'true',
];
const code = await new Promise<number>((resolve) => {
  const child = spawn(st, command, { stdio: ['ignore', 'inherit', 'inherit'] });
  child.on('close', (c) => resolve(c ?? 1));
});

interface HarEntry {
  request: { method: string; url: string; postData?: { text?: string } };
  response: { status: number; content?: { text?: string } };
}
const entries = (JSON.parse(readFileSync(report, 'utf8')) as { log: { entries: HarEntry[] } }).log.entries;
const byStatus = new Map<number, number>();
for (const e of entries) byStatus.set(e.response.status, (byStatus.get(e.response.status) ?? 0) + 1);
const bad = entries.filter((e) => e.response.status === 422 || e.response.status >= 500);
for (const e of bad.slice(0, 40)) {
  const body = e.request.postData?.text ? ` ${e.request.postData.text.slice(0, 300)}` : '';
  process.stdout.write(`${e.response.status} ${e.request.method} ${e.request.url.replace(running.url, '')}${body}\n`);
  process.stdout.write(`    → ${(e.response.content?.text ?? '').slice(0, 400)}\n`);
}
const count = (f: (s: number) => boolean) => [...byStatus].filter(([s]) => f(s)).reduce((n, [, c]) => n + c, 0);
process.stdout.write(
  `\nschemathesis (exit ${code}): ${entries.length} requests; 422: ${count((s) => s === 422)}; 5xx: ${count((s) => s >= 500)}; ` +
    `by status: ${[...byStatus]
      .sort(([a], [b]) => a - b)
      .map(([s, c]) => `${s}×${c}`)
      .join(', ')}\n`,
);

await running.close();
await services.close();
rmSync(dataDir, { recursive: true, force: true });
process.exit(bad.length > 0 ? 1 : 0);
