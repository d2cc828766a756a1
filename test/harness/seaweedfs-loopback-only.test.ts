/**
 * Issue 10: the SeaweedFS the tests start listens on 127.0.0.1 only and talks to nobody else: every TCP socket of its
 * process (read from /proc, before and after LanceDB wrote through it) is a loopback listener or a loopback connection.
 */
import t from 'tap';
import { connect } from '@lancedb/lancedb';
import { seaweedfsUnavailable, startSeaweedfs, tcpSocketsOf } from '../helpers/seaweedfs-server.js';

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|\[0:0:0:0:0:0:0:1\]|\[0:0:0:0:0:ffff:7f00:[0-9a-f]+\]):\d+$/;
const ANY_REMOTE = /^(0\.0\.0\.0|\[0:0:0:0:0:0:0:0\]):0$/;

const skip = seaweedfsUnavailable();
if (skip) t.plan(0, skip);
else {
  t.test('issue 10: SeaweedFS binds only loopback addresses and opens no connection off the machine', async (t) => {
    const s3 = await startSeaweedfs();
    t.teardown(() => s3.stop());
    const check = (when: string) => {
      const sockets = tcpSocketsOf(s3.pid);
      const listening = sockets.filter((s) => s.state === '0A');
      t.ok(listening.length >= 8, `${when}: ${listening.length} listeners (master, volume, filer, S3 and their gRPC ports)`);
      t.same(
        listening.filter((s) => !LOOPBACK.test(s.local)),
        [],
        `${when}: every listener is bound to loopback`,
      );
      t.same(
        sockets.filter((s) => s.state !== '0A' && !(LOOPBACK.test(s.local) && LOOPBACK.test(s.remote))),
        [],
        `${when}: every connection is loopback to loopback`,
      );
      t.same(
        listening.filter((s) => !ANY_REMOTE.test(s.remote)),
        [],
        `${when}: listeners have no peer`,
      );
    };
    check('after start');
    const db = await connect(`s3://${s3.bucket}/probe`, {
      storageOptions: {
        aws_access_key_id: s3.accessKeyId,
        aws_secret_access_key: s3.secretAccessKey,
        aws_region: 'us-east-1',
        aws_endpoint: s3.endpoint,
        allow_http: 'true',
        aws_virtual_hosted_style_request: 'false',
      },
    });
    const table = await db.createTable('t', [{ id: 1, text: 'hello' }]);
    t.equal(await table.countRows(), 1, 'LanceDB wrote and read through it');
    table.close();
    db.close();
    check('after a write');
  });
}
