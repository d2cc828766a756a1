/**
 * Issue 10: `svc ingest` with SVC_DATABASE_URL registers its documents in PostgreSQL (the fleet's shared page
 * registry) and takes its host ids from the state, like the indexer — nothing goes to the data dir's SQLite file.
 */
import t from 'tap';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { ingestCommand } from '../../cli/ingest.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { retrieve } from '../../index/retrieval/retrieval.js';
import { openRepositories } from '../../state/repos/open.js';
import { postgresUnavailable, startPostgres } from '../helpers/postgres-server.js';

const io = (env: NodeJS.ProcessEnv) => {
  const out = new PassThrough();
  const err = new PassThrough();
  let o = '';
  out.on('data', (c: Buffer) => (o += c.toString()));
  err.resume();
  return { io: { stdout: out, stderr: err, env }, out: () => o };
};

const why = postgresUnavailable();
if (why) {
  if (process.env.CI) t.fail(`issue 10: PostgreSQL ingest test cannot run: ${why}`);
  else t.test('svc ingest on PostgreSQL', { skip: why }, async () => undefined);
} else {
  t.test('issue 10: svc ingest on PostgreSQL: documents in the shared registry, host ids from the state', async (t) => {
    const server = await startPostgres();
    t.teardown(() => server.stop());
    const url = await server.createDatabase('ingest_issue10');
    const dir = t.testdir({ data: {} });
    const dataDir = join(dir, 'data');
    const file = join(dir, 'tiny.jsonl');
    writeFileSync(
      file,
      [
        { _id: 'a1', title: 'Glacier retreat', text: 'Glacier retreat accelerated in the northern valley.' },
        { _id: 'b2', title: 'Wildfire smoke', text: 'Wildfire smoke lowered air quality in the city.' },
      ]
        .map((d) => JSON.stringify(d))
        .join('\n'),
    );
    const env = { SVC_DATABASE_URL: url };
    const run = io(env);
    t.equal(await ingestCommand(['--jsonl', file, '--data-dir', dataDir, '--embedder', 'none'], run.io), 0);
    t.match(run.out(), /2 docs, 2 passages/);
    t.notOk(existsSync(join(dataDir, 'state.sqlite')), 'no local state file');

    const repos = await openRepositories({ dataDir: join(dir, 'elsewhere'), databaseUrl: url });
    t.teardown(() => repos.close());
    const row = await repos.documents.byUrl('corpus:tiny/b2');
    t.equal(row?.status, 'indexed', 'the page is in the shared registry, indexed');
    t.equal((await repos.documents.counts()).indexed, 2);

    const idx = await PassageIndex.open({ dir: join(dataDir, 'lance'), embedder: null, hostIds: repos.hostIds, textEngine: false });
    t.teardown(() => idx.close());
    const page = await idx.getPage(row!.pageRef);
    t.equal(page?.externalId, 'b2', 'the index page carries the registry page_ref');
    const ids = idx.hostIdsUnder('b2.tiny.corpus.invalid');
    t.equal(ids.length, 1);
    t.equal(ids[0], await repos.hostIds.idFor('b2.tiny.corpus.invalid'), "the index's host id is the state's");
    const hits = await retrieve(idx, { query: 'site:b2.tiny.corpus.invalid smoke', mode: 'bm25' });
    t.same(
      hits.passages.map((p) => p.row.page_ref),
      [row!.pageRef],
      'site: compiles to that id',
    );
  });
}
