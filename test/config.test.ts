import t from 'tap';
import { ConfigError, envBindings, loadConfig } from '../config.js';

t.test('precedence: CLI flag > environment > default', async (t) => {
  const d = loadConfig({ env: {} });
  t.equal(d.host, '127.0.0.1');
  t.equal(d.port, 8787);
  t.match(d.dataDir, /\/data$/);
  t.equal(d.images, false);
  t.equal(d.modelDir, undefined);
  const e = loadConfig({ env: { SVC_PORT: '9000', SVC_HOST: '::1', SVC_IMAGES: '1', SVC_ALLOWED_ORIGINS: 'http://a.example, http://b.example' } });
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
  t.equal(loadConfig({ env: { SVC_PUBLIC_URL: 'https://search.example.ca/' } }).crawlerInfoUrl, 'https://search.example.ca/webmasters', 'SVC_PUBLIC_URL');
  t.equal(
    loadConfig({ env: { SVC_PUBLIC_URL: 'https://search.example.ca', SVC_CRAWLER_INFO_URL: 'https://example.ca/bot' } }).crawlerInfoUrl,
    'https://example.ca/bot',
    'SVC_CRAWLER_INFO_URL wins',
  );
  t.throws(() => loadConfig({ env: { SVC_PUBLIC_URL: 'not a url' } }), ConfigError);
});
