/**
 * Issue 10: the passage index on object storage. Everything the index does in a folder, done in a bucket of a real
 * S3-compatible server (SeaweedFS on loopback, test/helpers/seaweedfs-server.ts): writes, BM25 and vector search,
 * operators, optimize with the FTS and ANN index builds, reopening by a second process, metadata kept in the bucket,
 * and the startup errors of a wrong configuration (never carrying a secret).
 */
import t from 'tap';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ConfigError, loadConfig } from '../../config.js';
import { createHashingEmbedder } from '../../index/serving/embedder.js';
import { indexLocation, IndexOpenError } from '../../index/engines/lance/location.js';
import { hydrate, retrieve } from '../../index/retrieval/retrieval.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { makePage } from '../helpers/page-input.js';
import { seaweedfsUnavailable, startSeaweedfs, type SeaweedfsServer } from '../helpers/seaweedfs-server.js';

const REPO = join(import.meta.dirname, '..', '..');
const skip = seaweedfsUnavailable();
if (skip) t.plan(0, skip);
else {
  const s3: SeaweedfsServer = await startSeaweedfs();
  t.teardown(() => s3.stop());
  const configFor = (prefix: string, dataDir: string, over: Record<string, string> = {}) =>
    loadConfig({ env: { ...s3.env(prefix), SVC_DATA_DIR: dataDir, ...over } });
  const refs = async (idx: PassageIndex, query: string, mode: 'bm25' | 'vector' | 'auto' = 'bm25') =>
    [...new Set((await retrieve(idx, { query, mode })).passages.map((p) => p.row.page_ref))].sort((a, b) => a - b);

  // Pages 1..150 (300 passages): enough vectors for an IVF-PQ build (threshold 200 below).
  const pages = Array.from({ length: 150 }, (_, i) => {
    const ref = i + 1;
    const host = ref % 3 === 0 ? 'news.example.com' : ref % 3 === 1 ? 'www.canada.ca' : 'blog.example.org';
    return makePage(ref, host, [`Passage about passports and renewal number ${ref}`, `Fees and forms for case ${ref} at the office`], {
      title: ref === 7 ? 'Seven wonders of travel documents' : `Page ${ref}`,
    });
  });

  t.test('issue 10: an index in a bucket writes, searches (BM25, vector, operators), optimizes and builds its indexes', async (t) => {
    const config = configFor('store', t.testdir());
    const location = indexLocation(config);
    t.equal(location.kind, 's3');
    t.equal(location.uri, `s3://${s3.bucket}/store`);
    t.notMatch(location.label, s3.secretAccessKey, 'the label carries no secret');
    t.equal(location.readConsistencyS, 5, 'a bucket reader checks for new versions every 5 s by default');
    const idx = await PassageIndex.open({
      location,
      embedder: createHashingEmbedder(64),
      vectorIndexThreshold: 200,
      refreshAfterMs: 0,
      optimizeEvery: 1_000_000,
    });
    t.teardown(() => idx.close());
    t.equal(idx.dir, `s3://${s3.bucket}/store`);
    for (let i = 0; i < pages.length; i += 50) await idx.upsertPages(pages.slice(i, i + 50));

    t.same(await idx.stats(), {
      pages: 150,
      passages: 300,
      vectors: 300,
      images: 0,
      rankingMode: 'hybrid-rrf-hashing',
      embedder: { modelId: 'hashing-stand-in-64', kind: 'hashing-stand-in' },
      vectorIndex: false,
    });
    t.equal((await refs(idx, 'passports')).length, 150, 'BM25: every page has a passports passage');
    t.same(await refs(idx, '+passports +wonders'), [7], 'BM25 with required terms');
    t.ok((await refs(idx, 'passports 42', 'vector')).length > 0, 'the vector arm answers');
    const site = await refs(idx, 'passports site:news.example.com');
    t.equal(site.length, 50);
    t.ok(
      site.every((r) => r % 3 === 0),
      'site: keeps the one host',
    );
    t.same(await refs(idx, '"renewal number 9"'), [9], 'a phrase');
    t.same(await refs(idx, 'wonders -travel'), [], 'an exclusion removes the only match');
    t.same(await refs(idx, 'wonders'), [7], 'the title is searched');
    const hit = await hydrate(idx, (await retrieve(idx, { query: '"number 88"', mode: 'bm25' })).passages);
    t.equal(hit[0]?.row.url, 'https://www.canada.ca/page-88', 'whole rows are read back from the bucket');
    t.equal((await idx.pagePassages(88, 0, 10))?.passages.length, 2);

    await idx.upsertPage(makePage(88, 'www.canada.ca', ['Replaced text about citizenship'], { contentHash: 'new' }));
    t.same(await refs(idx, '"number 88"'), [], 'a replaced page loses its old passages');
    t.same(await refs(idx, 'citizenship'), [88]);
    await idx.removePage(89);
    t.equal(await idx.getPage(89), null);

    await idx.optimize();
    const stats = await idx.stats();
    t.equal(stats.vectorIndex, true, 'the IVF-PQ index was built on object storage');
    t.equal(stats.passages, 297);
    t.same(await refs(idx, 'citizenship'), [88], 'search after optimize');
    t.equal((await refs(idx, 'passports')).length, 148);
    t.ok((await refs(idx, 'passports 12', 'vector')).length > 0, 'vector search through the ANN index');
    t.notOk(existsSync(join(config.dataDir, 'lance')), 'nothing of the index is written to the local data dir');
    t.ok(existsSync(location.journalDir), 'the write journal has its local folder');
    t.same(readdirSync(location.journalDir), [], 'and no journal is left after the writes finished');
  });

  t.test(
    'issue 10: a second process opens the same bucket, sees the same rows, and sees a new write within the read consistency interval',
    async (t) => {
      const dataDir = t.testdir();
      const env = { ...s3.env('shared'), SVC_DATA_DIR: dataDir, SVC_INDEX_READ_CONSISTENCY_S: '1' };
      const writer = await PassageIndex.open({ location: indexLocation(loadConfig({ env })), embedder: null, refreshAfterMs: 0 });
      t.teardown(() => writer.close());
      await writer.upsertPages(pages.slice(0, 30));
      await writer.optimize();
      const mine = { passports: await refs(writer, 'passports'), site: await refs(writer, 'passports site:news.example.com') };

      const child = spawn(process.execPath, ['--import', 'tsx', join(REPO, 'test/index/s3-reader-child.ts'), 'zebrafish'], {
        cwd: REPO,
        env: { PATH: process.env.PATH, ...env, SVC_DATA_DIR: join(dataDir, 'reader') },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
      const first = JSON.parse(String((await lines.next()).value)) as {
        stats: { pages: number; passages: number };
        passports: number[];
        site: number[];
        page: { title: string } | null;
      };
      t.equal(first.stats.pages, 30);
      t.equal(first.stats.passages, 60);
      t.same(first.passports, mine.passports, 'the same BM25 result in both processes');
      t.same(first.site, mine.site, 'the same site: result');
      t.equal(first.page?.title, 'Seven wonders of travel documents');

      await writer.upsertPage(makePage(500, 'www.canada.ca', ['Zebrafish fin regeneration']));
      const second = JSON.parse(String((await lines.next()).value)) as { seen: number[]; afterMs: number };
      t.same(second.seen, [500], "the reader sees the writer's new page without reopening");
      t.comment(`seen by the other process ${second.afterMs} ms after its first read (interval 1 s)`);
      await new Promise((r) => child.once('exit', r));
      t.equal(child.exitCode, 0);
    },
  );

  t.test('issue 10: the index metadata lives in the bucket (another data dir reopens it and knows its vector model)', async (t) => {
    const first = await PassageIndex.open({
      location: indexLocation(configFor('meta', t.testdir())),
      embedder: createHashingEmbedder(32),
      refreshAfterMs: 0,
    });
    await first.upsertPages(pages.slice(0, 3));
    await first.close();
    const other = await PassageIndex.open({
      location: indexLocation(configFor('meta', t.testdir())),
      embedder: createHashingEmbedder(64),
      refreshAfterMs: 0,
    });
    t.teardown(() => other.close());
    t.equal(other.rankingMode(), 'bm25', 'vectors of another model are not used: the stored model id came from the bucket');
    t.equal((await other.stats()).vectors, 6);
    const same = await PassageIndex.open({
      location: indexLocation(configFor('meta', t.testdir())),
      embedder: createHashingEmbedder(32),
      refreshAfterMs: 0,
    });
    t.teardown(() => same.close());
    t.equal(same.rankingMode(), 'hybrid-rrf-hashing');
  });

  t.test('issue 10: wrong or absent credentials, a missing bucket or a dead endpoint are startup errors without secrets', async (t) => {
    const dataDir = t.testdir();
    const noCreds = { SVC_INDEX_URI: `s3://${s3.bucket}/x`, SVC_S3_ENDPOINT: s3.endpoint, SVC_DATA_DIR: dataDir };
    t.throws(() => indexLocation(loadConfig({ env: noCreds })), ConfigError, 'no credentials: refused before any request');
    t.throws(() => indexLocation(loadConfig({ env: { ...noCreds, SVC_S3_ACCESS_KEY_ID: s3.accessKeyId } })), /SVC_S3_SECRET_ACCESS_KEY/);
    const wrongSecret = 'Wr0ng-secret-value-xyz';
    const open = (env: Record<string, string>) => PassageIndex.open({ location: indexLocation(loadConfig({ env })), embedder: null });
    const cases: [string, Record<string, string>, RegExp, string[]][] = [
      [
        'a wrong secret',
        { ...s3.env('x'), SVC_S3_SECRET_ACCESS_KEY: wrongSecret, SVC_DATA_DIR: dataDir },
        /refused the credentials \(SignatureDoesNotMatch\)/,
        [wrongSecret],
      ],
      [
        'an unknown key id',
        { ...s3.env('x'), SVC_S3_ACCESS_KEY_ID: 'nobodyknowsme', SVC_DATA_DIR: dataDir },
        /refused the credentials \(InvalidAccessKeyId\)/,
        ['nobodyknowsme', s3.secretAccessKey],
      ],
      [
        'a missing bucket',
        { ...s3.env('x'), SVC_INDEX_URI: 's3://no-such-bucket/x', SVC_DATA_DIR: dataDir },
        /NoSuchBucket/,
        [s3.secretAccessKey, s3.accessKeyId],
      ],
      [
        'a dead endpoint',
        { ...s3.env('x'), SVC_S3_ENDPOINT: 'http://127.0.0.1:9', SVC_DATA_DIR: dataDir },
        /cannot be reached/,
        [s3.secretAccessKey, s3.accessKeyId],
      ],
    ];
    for (const [what, env, reason, secrets] of cases) {
      const err = await open(env).then(
        (idx) => (void idx.close(), null),
        (e: unknown) => e,
      );
      t.ok(err instanceof IndexOpenError, `${what}: IndexOpenError`);
      const message = (err as Error).message;
      t.match(message, /^cannot open the index at s3:\/\//, `${what}: says where`);
      t.match(message, reason, `${what}: says why`);
      for (const s of secrets) t.notOk(message.includes(s), `${what}: no credential in the message`);
    }
  });
}
