import t from 'tap';
import { ConfigError, envBindings, loadConfig } from '../config.js';

t.test('precedence: CLI flag > environment > default', async (t) => {
  const d = loadConfig({ env: {} });
  t.equal(d.host, '127.0.0.1');
  t.equal(d.port, 8787);
  t.match(d.dataDir, /\/data$/);
  t.equal(d.images, false);
  t.equal(d.modelDir, undefined);
  const e = loadConfig({
    env: { SVC_PORT: '9000', SVC_HOST: '::1', SVC_IMAGES: '1', SVC_ALLOWED_ORIGINS: 'http://a.example, http://b.example' },
  });
  t.equal(e.port, 9000);
  t.equal(e.host, '::1');
  t.equal(e.images, true);
  t.same(e.allowedOrigins, ['http://a.example', 'http://b.example']);
  const f = loadConfig({ env: { SVC_PORT: '9000', SVC_DATA_DIR: '/tmp/from-env' }, flags: { port: '9100', dataDir: '/tmp/from-flag' } });
  t.equal(f.port, 9100, 'flag beats env');
  t.equal(f.dataDir, '/tmp/from-flag');
  const empty = loadConfig({ env: { SVC_PORT: '' } });
  t.equal(empty.port, 8787, 'an empty variable counts as unset');
});

t.test('SVC_RESOLVE pins keep their comma-separated addresses', async (t) => {
  const c = loadConfig({ env: { SVC_RESOLVE: 'a.test:80:127.0.0.1,127.0.0.2 b.test:443:127.0.0.3;c.test:80:::1' } });
  t.same(c.resolve, ['a.test:80:127.0.0.1,127.0.0.2', 'b.test:443:127.0.0.3', 'c.test:80:::1']);
});

t.test('bad values name the variable', async (t) => {
  t.throws(() => loadConfig({ env: { SVC_PORT: 'eighty' } }), ConfigError);
  try {
    loadConfig({ env: { SVC_PORT: '70000' } });
    t.fail('should throw');
  } catch (e) {
    t.match((e as Error).message, /SVC_PORT/);
  }
  t.throws(() => loadConfig({ env: { SVC_IMAGES: 'maybe' } }), ConfigError);
});

t.test('every key has a distinct SVC_ binding', async (t) => {
  const names = Object.values(envBindings);
  t.equal(new Set(names).size, names.length);
  t.ok(names.every((n) => n.startsWith('SVC_')));
});

t.test("issue 13: the crawler's info URL is this deployment's /webmasters page, never a placeholder", async (t) => {
  t.equal(loadConfig({ env: {} }).crawlerInfoUrl, 'http://127.0.0.1:8787/webmasters', 'default: the listen address');
  t.equal(loadConfig({ env: { SVC_HOST: '::1', SVC_PORT: '9000' } }).crawlerInfoUrl, 'http://[::1]:9000/webmasters');
  t.equal(loadConfig({ env: { SVC_HOST: '0.0.0.0' } }).crawlerInfoUrl, 'http://localhost:8787/webmasters');
  t.equal(
    loadConfig({ env: { SVC_PUBLIC_URL: 'https://search.example.ca/' } }).crawlerInfoUrl,
    'https://search.example.ca/webmasters',
    'SVC_PUBLIC_URL',
  );
  t.equal(
    loadConfig({ env: { SVC_PUBLIC_URL: 'https://search.example.ca', SVC_CRAWLER_INFO_URL: 'https://example.ca/bot' } }).crawlerInfoUrl,
    'https://example.ca/bot',
    'SVC_CRAWLER_INFO_URL wins',
  );
  t.throws(() => loadConfig({ env: { SVC_PUBLIC_URL: 'not a url' } }), ConfigError);
});

t.test('issue 10: SVC_INDEX_URI defaults to <dataDir>/lance, takes a path or s3://bucket/prefix, refuses other schemes', async (t) => {
  t.equal(loadConfig({ env: { SVC_DATA_DIR: '/srv/svc' } }).indexUri, '/srv/svc/lance', 'the default is unchanged');
  t.equal(loadConfig({ env: {}, flags: { dataDir: '/tmp/flagged' } }).indexUri, '/tmp/flagged/lance', 'follows --data-dir');
  t.equal(loadConfig({ env: { SVC_INDEX_URI: '/mnt/index' } }).indexUri, '/mnt/index');
  t.match(loadConfig({ env: { SVC_INDEX_URI: 'rel/index' } }).indexUri, /^\/.*\/rel\/index$/, 'a relative path is made absolute');
  t.equal(loadConfig({ env: { SVC_INDEX_URI: 's3://my-bucket/svc/index/' } }).indexUri, 's3://my-bucket/svc/index', 'no trailing slash');
  t.equal(loadConfig({ env: { SVC_INDEX_URI: 's3://my-bucket' } }).indexUri, 's3://my-bucket');
  t.throws(() => loadConfig({ env: { SVC_INDEX_URI: 'gs://bucket/x' } }), /SVC_INDEX_URI.*not gs:\/\//);
  t.throws(() => loadConfig({ env: { SVC_INDEX_URI: 's3://x/y' } }), /SVC_INDEX_URI/, 'a bucket name is 3-63 characters');
});

t.test('issue 10: S3 settings come from SVC_S3_* or, when unset, the AWS variables', async (t) => {
  const aws = loadConfig({
    env: {
      AWS_ACCESS_KEY_ID: 'AKID',
      AWS_SECRET_ACCESS_KEY: 'SECRET',
      AWS_REGION: 'ca-central-1',
      AWS_ENDPOINT_URL: 'http://127.0.0.1:8333',
    },
  });
  t.equal(aws.s3AccessKeyId, 'AKID');
  t.equal(aws.s3SecretAccessKey, 'SECRET');
  t.equal(aws.s3Region, 'ca-central-1');
  t.equal(aws.s3Endpoint, 'http://127.0.0.1:8333');
  const svc = loadConfig({ env: { AWS_ACCESS_KEY_ID: 'AKID', SVC_S3_ACCESS_KEY_ID: 'MINE', AWS_DEFAULT_REGION: 'eu-west-1' } });
  t.equal(svc.s3AccessKeyId, 'MINE', 'the SVC_ variable wins');
  t.equal(svc.s3Region, 'eu-west-1');
  try {
    loadConfig({ env: { SVC_S3_ENDPOINT: 'not a url with SECRET' } });
    t.fail('should throw');
  } catch (e) {
    t.match((e as Error).message, /SVC_S3_ENDPOINT/);
    t.notMatch((e as Error).message, /SECRET/, 'the value is not echoed');
  }
});
