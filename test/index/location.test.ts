import * as lancedb from '@lancedb/lancedb';
import t from 'tap';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../config.js';
import { indexLocation, openError, readIndexMeta, S3_READ_CONSISTENCY_S, writeIndexMeta } from '../../index/engines/lance/location.js';

const s3 = {
  SVC_INDEX_URI: 's3://bucket-one/svc',
  SVC_S3_ACCESS_KEY_ID: 'AKIDEXAMPLE',
  SVC_S3_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI',
  SVC_DATA_DIR: '/srv/svc',
};

t.test('issue 10: a local index location is the folder itself, with no storage options and no consistency checks', async (t) => {
  const loc = indexLocation(loadConfig({ env: { SVC_DATA_DIR: '/srv/svc' } }));
  t.same(loc, {
    kind: 'local',
    uri: '/srv/svc/lance',
    storageOptions: {},
    readConsistencyS: undefined,
    journalDir: '/srv/svc/lance',
    label: '/srv/svc/lance',
    secrets: [],
  });
  t.equal(indexLocation(loadConfig({ env: { SVC_DATA_DIR: '/srv/svc', SVC_INDEX_READ_CONSISTENCY_S: '2' } })).readConsistencyS, 2);
});

t.test('issue 10: an s3:// location carries LanceDB storage options; the label and journal folder carry no secret', async (t) => {
  const local = indexLocation(loadConfig({ env: { ...s3, SVC_S3_ENDPOINT: 'http://127.0.0.1:8333/' } }));
  t.equal(local.kind, 's3');
  t.same(local.storageOptions, {
    aws_access_key_id: 'AKIDEXAMPLE',
    aws_secret_access_key: 'wJalrXUtnFEMI',
    aws_region: 'us-east-1',
    connect_timeout: '5s',
    timeout: '5s',
    client_max_retries: '3',
    client_retry_timeout: '5',
    download_retry_count: '1',
    allow_http: 'true',
    aws_endpoint: 'http://127.0.0.1:8333',
    aws_virtual_hosted_style_request: 'false',
  });
  t.equal(local.readConsistencyS, S3_READ_CONSISTENCY_S);
  t.equal(local.journalDir, '/srv/svc/index-journal/bucket-one/svc');
  t.equal(local.label, 's3://bucket-one/svc (http://127.0.0.1:8333)');

  const aws = indexLocation(
    loadConfig({ env: { ...s3, SVC_S3_REGION: 'ca-central-1', SVC_S3_SESSION_TOKEN: 'TOKEN', SVC_INDEX_READ_CONSISTENCY_S: '0' } }),
  );
  t.same(
    aws.storageOptions,
    {
      aws_access_key_id: 'AKIDEXAMPLE',
      aws_secret_access_key: 'wJalrXUtnFEMI',
      aws_region: 'ca-central-1',
      connect_timeout: '5s',
      timeout: '5s',
      client_max_retries: '3',
      client_retry_timeout: '5',
      download_retry_count: '1',
      aws_session_token: 'TOKEN',
      aws_virtual_hosted_style_request: 'true',
    },
    'AWS itself: https, virtual-hosted style',
  );
  t.equal(aws.readConsistencyS, 0);
  t.equal(aws.label, 's3://bucket-one/svc (AWS S3)');

  t.throws(() => indexLocation(loadConfig({ env: { ...s3, SVC_S3_ENDPOINT: 'http://10.0.0.5:8333' } })), /SVC_S3_ALLOW_HTTP/);
  t.equal(
    indexLocation(loadConfig({ env: { ...s3, SVC_S3_ENDPOINT: 'http://10.0.0.5:8333', SVC_S3_ALLOW_HTTP: '1' } })).storageOptions
      .allow_http,
    'true',
  );
  t.equal(
    indexLocation(loadConfig({ env: { ...s3, SVC_S3_ENDPOINT: 'https://objects.example.net' } })).storageOptions.allow_http,
    undefined,
  );
});

t.test('issue 10: an open error names the location and the reason and scrubs every credential', async (t) => {
  const loc = indexLocation(loadConfig({ env: { ...s3, SVC_S3_ENDPOINT: 'http://127.0.0.1:8333' } }));
  const e = openError(new Error('Generic S3 error: key AKIDEXAMPLE secret wJalrXUtnFEMI refused'), loc);
  t.equal(
    e.message,
    'cannot open the index at s3://bucket-one/svc (http://127.0.0.1:8333): Generic S3 error: key [redacted] secret [redacted] refused',
  );
  t.match(openError(new Error('<Error><Code>AccessDenied</Code></Error>'), loc).message, /refused the credentials \(AccessDenied\)/);
});

t.test('issue 10: a metadata table listed before its first commit (the writer creating it) reads as not there yet', async (t) => {
  // The metadata of an index on object storage is a LanceDB table. A reader started beside the writer (the fleet test:
  // crawlers and API replicas with the indexer) can list it between its first objects and its first version; opening
  // it then failed ("Table 'svc_meta' was not found … _versions") and the reader exited. Here with LanceDB on a folder:
  // the table's directory without a version, as listed mid-creation.
  const dir = t.testdir();
  mkdirSync(join(dir, 'svc_meta.lance'));
  const db = await lancedb.connect(dir);
  t.teardown(() => db.close());
  const names = new Set(await db.tableNames());
  t.ok(names.has('svc_meta'), 'listed');
  const loc = indexLocation(loadConfig({ env: s3 })); // only its kind is read: the metadata lives in a table
  t.equal(await readIndexMeta(db, loc, names), null, 'not there yet: the reader waits for the writer');
  rmSync(join(dir, 'svc_meta.lance'), { recursive: true });
  await writeIndexMeta(db, loc, { vectorDim: 384 });
  t.same(await readIndexMeta(db, loc, new Set(await db.tableNames())), { vectorDim: 384 }, 'once committed: read');
});
