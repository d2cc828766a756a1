/**
 * Issue 10: whole services on an index in a bucket (SeaweedFS on loopback). Two services on the same s3:// location
 * with their own data dirs (a writer and an API replica) answer svc_search over REST from the bucket; the replica sees
 * a later write without restarting; no credential reaches a log line, /readyz or a CLI error.
 */
import t from 'tap';
import { PassThrough } from 'node:stream';
import { main } from '../../cli/main.js';
import { api, startTestService, type TestService } from '../helpers/service.js';
import { makePage } from '../helpers/page-input.js';
import { seaweedfsUnavailable, startSeaweedfs, type SeaweedfsServer } from '../helpers/seaweedfs-server.js';

interface SearchBody {
  readonly results: { readonly url: string; readonly page_ref: number }[];
}

const skip = seaweedfsUnavailable();
if (skip) t.plan(0, skip);
else {
  const s3: SeaweedfsServer = await startSeaweedfs();
  t.teardown(() => s3.stop());
  const s3Config = (prefix: string) => ({
    indexUri: `s3://${s3.bucket}/${prefix}`,
    s3Endpoint: s3.endpoint,
    s3AccessKeyId: s3.accessKeyId,
    s3SecretAccessKey: s3.secretAccessKey,
    indexReadConsistencyS: 0,
  });
  const leaks = (text: string) => [s3.secretAccessKey, s3.accessKeyId].filter((s) => text.includes(s));
  const urls = async (s: TestService, q: string) => {
    const r = await api(s, `/api/v1/search?q=${encodeURIComponent(q)}`);
    if (r.status !== 200) throw new Error(`search answered ${r.status}: ${r.text}`);
    return (r.body as SearchBody).results.map((x) => x.url).sort();
  };

  t.test('issue 10: two services on one s3:// index answer svc_search from the bucket; the replica sees new pages', async (t) => {
    const writer = await startTestService({ config: s3Config('fleet') });
    t.teardown(writer.close);
    await writer.services.deps.index.upsertPages([
      makePage(1, 'www.canada.ca', ['Passport renewal by mail for adults']),
      makePage(2, 'www.ontario.ca', ['Driver licence renewal in Ontario']),
    ]);
    t.same(await urls(writer, 'passport renewal'), ['https://www.canada.ca/page-1', 'https://www.ontario.ca/page-2']);

    const replica = await startTestService({ config: s3Config('fleet') });
    t.teardown(replica.close);
    t.not(replica.dataDir, writer.dataDir, 'nothing shared but the bucket');
    t.same(
      await urls(replica, 'passport renewal'),
      ['https://www.canada.ca/page-1', 'https://www.ontario.ca/page-2'],
      'the replica reads the same index',
    );

    await writer.services.deps.index.upsertPage(makePage(3, 'www.quebec.ca', ['Zebrafish research permits in Quebec']));
    t.same(
      await urls(replica, 'zebrafish'),
      ['https://www.quebec.ca/page-3'],
      'a later write is seen by the running replica (interval 0: the next read)',
    );

    for (const s of [writer, replica]) {
      const ready = await api(s, '/readyz', { auth: null });
      t.equal(ready.status, 200);
      t.same(leaks(ready.text), [], '/readyz shows no credential');
      t.same(leaks(s.logLines.join('\n')), [], 'no log line carries a credential');
    }
  });

  const run = async (argv: string[], env: NodeJS.ProcessEnv) => {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let out = '';
    let err = '';
    stdout.on('data', (c: Buffer) => (out += c.toString()));
    stderr.on('data', (c: Buffer) => (err += c.toString()));
    const code = await main(argv, { stdout, stderr, env });
    return { code, out, err };
  };

  t.test(
    'issue 10: svc status reads the s3:// index; wrong or absent credentials are one-line startup errors without secrets',
    async (t) => {
      const dataDir = t.testdir();
      const good = await run(['status', '--json', '--data-dir', dataDir], s3.env('fleet'));
      t.equal(good.code, 0, good.err);
      const { segments, ...index } = (JSON.parse(good.out) as { index: { segments: { version: number; table_version: number }[] } }).index;
      t.same(index, {
        pages: 3,
        passages: 3,
        vectors: 0,
        vector_model: null,
        reembedding: null,
        shards: null,
      });
      // The writer above published its last changes in the bucket when it closed: a reader opening now loads them.
      t.equal(segments.length, 1);
      t.equal(segments[0]!.version, segments[0]!.table_version, "the newest engine segment is at the table's version");

      const wrong = await run(['status', '--data-dir', dataDir], { ...s3.env('fleet'), SVC_S3_SECRET_ACCESS_KEY: 'not-the-secret-123' });
      t.equal(wrong.code, 1);
      t.match(
        wrong.err,
        /^svc: cannot open the index at s3:\/\/svc-test\/fleet \(http:\/\/127\.0\.0\.1:\d+\): the store refused the credentials \(SignatureDoesNotMatch\)/,
      );
      t.notMatch(wrong.err, /not-the-secret-123/);
      t.same(leaks(wrong.err), []);
      t.equal(wrong.err.trim().split('\n').length, 1, 'one line, no stack');

      const absent = await run(['status', '--data-dir', dataDir], { SVC_INDEX_URI: 's3://svc-test/fleet', SVC_S3_ENDPOINT: s3.endpoint });
      t.equal(absent.code, 2, 'a configuration error');
      t.match(absent.err, /SVC_S3_ACCESS_KEY_ID and SVC_S3_SECRET_ACCESS_KEY/);

      const plain = await run(['status', '--data-dir', dataDir], {
        ...s3.env('fleet'),
        SVC_S3_ENDPOINT: 'http://objects.example.net:8333',
      });
      t.equal(plain.code, 2, 'plain http off loopback is refused before any request');
      t.match(plain.err, /SVC_S3_ALLOW_HTTP/);
    },
  );
}
