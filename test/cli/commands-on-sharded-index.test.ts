/**
 * The commands on an index of 3 shards (SVC_INDEX_SHARDS=3): `svc status` gives each shard's pages and passages and
 * the totals, `svc reindex --vectors` re-embeds every shard or those of `--shards`, `svc crawl` writes each page to its
 * shard, and webmaster diagnostics read a crawled host's pages from the shards that hold them. Expected shards are
 * computed from the URLs here (FNV-1a modulo 3), not read back through the code under test.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import t from 'tap';
import { corpusName, corpusUrl } from '../../cli/ingest.js';
import { main } from '../../cli/main.js';
import { crawlCommand } from '../../cli/crawl.js';
import { loadConfig } from '../../config.js';
import { startTestWeb } from '../../fixtures/test-web/index.js';
import { openIndex, ShardedIndex } from '../../index/shards/sharded-index.js';
import { urlHash32 } from '../../page-model.js';
import { openStateDb } from '../../state/db.js';
import { sqliteRepositories } from '../../state/repos/sqlite.js';
import { crawlAndCheckDiagnostics } from '../webmaster/diagnostics-checks.js';

const SHARDS = { SVC_INDEX_SHARDS: '3', SVC_PROGRESS_MS: '0', SVC_LOG_LEVEL: 'warn' };
const shard3 = (url: string) => urlHash32(url) % 3;

async function run(argv: string[], env: NodeJS.ProcessEnv = SHARDS): Promise<{ code: number; out: string; err: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  const code = await main(argv, { stdout, stderr, env });
  return { code, out, err };
}

interface StatusShard {
  shard: number;
  pages: number;
  passages: number;
  vectors: number;
}
const status = async (dataDir: string) =>
  JSON.parse((await run(['status', '--json', '--data-dir', dataDir])).out) as {
    index: { pages: number; passages: number; vectors: number; shards: StatusShard[] | null };
  };

t.test('svc status and svc reindex on 3 shards: per-shard counts and totals; every shard re-embedded, or those given', async (t) => {
  const dir = t.testdir();
  const file = join(dir, 'c.jsonl');
  const ids = Array.from({ length: 15 }, (_, i) => `doc${i}`);
  writeFileSync(
    file,
    ids.map((id, i) => JSON.stringify({ _id: id, title: `Record ${id}`, text: `Text of record ${id} about topic ${i}.` })).join('\n') +
      '\n',
  );
  const dataDir = join(dir, 'data');
  const ing = await run(['ingest', '--jsonl', file, '--data-dir', dataDir, '--embedder', 'none']);
  t.equal(ing.code, 0, ing.err);
  const name = corpusName(file);
  const want = [0, 1, 2].map((s) => ids.filter((id) => shard3(corpusUrl(name, id)) === s).length);
  t.ok(
    want.every((n) => n > 0),
    `every shard holds pages (${want.join(', ')})`,
  );

  const s0 = await status(dataDir);
  t.same(
    s0.index.shards,
    want.map((n, shard) => ({ shard, pages: n, passages: n, vectors: 0 })),
    'each shard: its pages and passages',
  );
  t.match(s0.index, { pages: 15, passages: 15, vectors: 0 }, 'the totals');
  const text = await run(['status', '--data-dir', dataDir]);
  t.match(text.out, /index +15 pages, 15 passages, 0 vectors\n {2}shard 0 of 3: \d+ pages, \d+ passages, 0 vectors\n {2}shard 1 of 3/);

  // Only shard 1, then the rest.
  const one = await run(['reindex', '--vectors', '--embedder', 'hashing', '--shards', '1', '--data-dir', dataDir]);
  t.equal(one.code, 0, one.err);
  t.match(one.out, new RegExp(`index \\(shards 1 of 3\\): ${want[1]} pages, ${want[1]} passages, ${want[1]} vectors`));
  t.same(
    (await status(dataDir)).index.shards!.map((s) => s.vectors),
    [0, want[1], 0],
    '--shards 1: that shard alone got vectors',
  );
  const all = await run(['reindex', '--vectors', '--embedder', 'hashing', '--data-dir', dataDir]);
  t.equal(all.code, 0, all.err);
  t.match(all.out, /index \(shards 0,1,2 of 3\): 15 pages, 15 passages, 15 vectors/);
  t.same(
    (await status(dataDir)).index.shards!.map((s) => s.vectors),
    want,
    'every shard has its vectors',
  );
  const bad = await run(['reindex', '--vectors', '--embedder', 'hashing', '--shards', '3', '--data-dir', dataDir]);
  t.equal(bad.code, 2, 'a shard the index does not have is a usage error');
  t.match(bad.err, /shard 3 does not exist: the index has 3 shard\(s\)/);
});

t.test('svc crawl on 3 shards: each crawled page is written to its shard, once', async (t) => {
  const web = await startTestWeb({ generatedHosts: 2, generatedPages: 8 });
  t.teardown(() => web.close());
  const dir = t.testdir();
  const dataDir = join(dir, 'data');
  const out = new PassThrough();
  const err = new PassThrough();
  let e = '';
  err.on('data', (c: Buffer) => (e += c.toString()));
  out.resume();
  const code = await crawlCommand(
    [
      '--seeds',
      web.url('gen-0.test', '/'),
      web.url('gen-1.test', '/'),
      '--allow-loopback',
      '--data-dir',
      dataDir,
      '--gap-ms',
      '10',
      '--max-pages',
      '12',
      '--stay-on-hosts',
      '--wait',
      '1',
      ...web.pins.flatMap((p) => ['--resolve', p]),
    ],
    { stdout: out, stderr: err, env: SHARDS },
  );
  t.equal(code, 0, e);
  const db = openStateDb(join(dataDir, 'state.sqlite'));
  const docs = db.prepare(`SELECT page_ref AS ref, url FROM documents WHERE status = 'indexed' ORDER BY page_ref`).all() as {
    ref: number;
    url: string;
  }[];
  db.close();
  t.ok(docs.length >= 6, `pages indexed (${docs.length})`);

  const index = await openIndex({ dir: join(dataDir, 'lance'), embedder: null, textEngine: false, writes: false });
  t.teardown(() => index.close());
  t.ok(index instanceof ShardedIndex && index.shardCount === 3, 'the crawl created an index of 3 shards');
  const shards = (index as ShardedIndex).shards;
  for (const d of docs) {
    const holders = (await Promise.all(shards.map((s) => s.getPage(d.ref)))).flatMap((p, i) => (p ? [i] : []));
    t.same(holders, [shard3(d.url)], `${d.url}: in shard ${shard3(d.url)} only`);
  }
  const s = await status(dataDir);
  t.equal(s.index.pages, docs.length, 'svc status: the total is every indexed page');
  t.same(
    s.index.shards!.map((x) => x.pages),
    [0, 1, 2].map((i) => docs.filter((d) => shard3(d.url) === i).length),
    'svc status: each shard its own',
  );
});

t.test('webmaster diagnostics on 3 shards equal what the state and the shards hold', async (t) => {
  const web = await startTestWeb({ generatedHosts: 1, generatedPages: 2 });
  t.teardown(() => web.close());
  const dir = t.testdir();
  const config = loadConfig({ env: {}, flags: { dataDir: dir, resolve: web.pins, crawlAllowLoopback: true, crawlGapMs: 10 } });
  const db = openStateDb(join(dir, 'state.sqlite'));
  const index = await openIndex({ dir: join(dir, 'lance'), shards: 3, embedder: null });
  t.teardown(async () => {
    await index.close();
    db.close();
  });
  t.ok(index instanceof ShardedIndex, 'sharded');
  const repos = sqliteRepositories(db, { defaultGapMs: config.crawlGapMs });
  await crawlAndCheckDiagnostics(t, { config, repos, index, web, rows: async (sql) => db.prepare(sql).all() as Record<string, unknown>[] });
  // The crawl spread alpha.test's pages over more than one shard: the diagnostics read them from each.
  const db2 = db.prepare(`SELECT url FROM documents WHERE host = 'alpha.test' AND status = 'indexed'`).all() as { url: string }[];
  t.ok(new Set(db2.map((d) => shard3(d.url))).size > 1, 'pages of the host in several shards');
});
