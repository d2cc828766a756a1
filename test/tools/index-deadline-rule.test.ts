import t from 'tap';
import { indexReadDeadlineMs, S3_INDEX_READ_TIMEOUT_MS } from '../../tools/index-deadline.js';

t.test('a request reading the store has the index deadline; one answered by searchers has the per-shard one only', async (t) => {
  const bucket = { indexUri: 's3://b/idx', indexReadTimeoutMs: undefined };
  t.equal(indexReadDeadlineMs(bucket), S3_INDEX_READ_TIMEOUT_MS, 'a bucket: the default deadline');
  t.equal(indexReadDeadlineMs({ indexUri: '/srv/idx', indexReadTimeoutMs: undefined }), 0, 'a local folder: none');
  t.equal(indexReadDeadlineMs({ indexUri: '/srv/idx', indexReadTimeoutMs: 900 }), 900, 'configured');
  t.equal(indexReadDeadlineMs(bucket, { remote: false }), S3_INDEX_READ_TIMEOUT_MS, 'shards held here read the store');
  t.equal(indexReadDeadlineMs(bucket, { remote: true }), 0, 'over searchers: none (each shard is bounded by its own)');
  t.equal(indexReadDeadlineMs({ ...bucket, indexReadTimeoutMs: 900 }, { remote: true }), 0, 'even when configured');
});
