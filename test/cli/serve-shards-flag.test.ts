/**
 * `svc serve --shards`: a list that is not one, or the flag on a role that writes or serves no shard subset, is a
 * usage error (exit 2); a shard the index does not have refuses the start in one line (exit 1), before anything is
 * written; a shard another indexer of the same data dir holds does too, naming it and its owner.
 */
import { PassThrough } from 'node:stream';
import t from 'tap';
import { serveCommand } from '../../cli/serve.js';
import { loadConfig } from '../../config.js';
import { createServices } from '../../main.js';

function capture() {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  return { io: { stdout, stderr, env: { SVC_LOG_LEVEL: 'silent', SVC_INDEX_SHARDS: '4' } }, out: () => out, err: () => err };
}

t.test('svc serve --shards: usage errors exit 2, a shard out of range or held exits 1 in one line', async (t) => {
  const dir = t.testdir();
  const args = ['--port', '0', '--data-dir', dir, '--no-crawl'];

  const notList = capture();
  t.equal(await serveCommand([...args, '--role', 'indexer', '--shards', 'two'], notList.io), 2);
  t.equal(notList.err(), 'svc serve: --shards: "two" is not a shard number or range (e.g. 0-3 or 0,2)\n');

  const wrongRole = capture();
  t.equal(await serveCommand([...args, '--role', 'api', '--shards', '0-1'], wrongRole.io), 2);
  t.equal(wrongRole.err(), 'svc serve: --shards is for --role indexer or searcher (got --role api)\n');

  const outOfRange = capture();
  t.equal(await serveCommand([...args, '--role', 'indexer', '--shards', '2-4'], outOfRange.io), 1);
  t.equal(outOfRange.err(), 'svc serve: --shards: shard 4 does not exist (the index has 4, 0 to 3)\n');

  // Another indexer of this data dir holds shard 2 (SQLite: the same rule as on PostgreSQL).
  const holder = await createServices(loadConfig({ env: { SVC_INDEX_SHARDS: '4' }, flags: { dataDir: dir, crawl: false } }), {
    role: 'indexer',
    embedder: null,
    shards: [2, 3],
  });
  t.teardown(() => holder.close());
  const held = capture();
  t.equal(await serveCommand([...args, '--role', 'indexer', '--shards', '0-2'], held.io), 1);
  t.match(
    held.err(),
    new RegExp(
      `^svc serve: shard 2 is written by indexer-\\S+-${process.pid} \\(lease until \\S+, renewed while it runs\\); one writer per shard`,
    ),
  );
  t.equal(held.err().split('\n').length, 2, 'one line');
  await holder.close();
});
