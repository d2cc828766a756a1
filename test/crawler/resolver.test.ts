import t from 'tap';
import { createResolver, parsePin, ResolveError, type LookupFn } from '../../crawler/resolver.js';

t.test('parsePin: curl HOST:PORT:ADDR form', async (t) => {
  t.same(parsePin('alpha.test:8080:127.0.0.1'), { host: 'alpha.test', port: 8080, addresses: ['127.0.0.1'] });
  t.same(parsePin('Alpha.Test.:443:[::1]'), { host: 'alpha.test', port: 443, addresses: ['::1'] });
  t.same(parsePin('a.test:80:::1'), { host: 'a.test', port: 80, addresses: ['::1'] });
  t.same(parsePin('a.test:*:10.0.0.1,10.0.0.2'), { host: 'a.test', port: null, addresses: ['10.0.0.1', '10.0.0.2'] });
  for (const bad of [
    '',
    'alpha.test',
    'alpha.test:80',
    'alpha.test:80:',
    'alpha.test:0:127.0.0.1',
    'alpha.test:70000:127.0.0.1',
    'alpha.test:http:127.0.0.1',
    'alpha.test:80:localhost',
    'al pha:80:127.0.0.1',
    ':80:127.0.0.1',
    '-a.test:80:127.0.0.1',
  ]) {
    t.throws(() => parsePin(bad), ResolveError, JSON.stringify(bad));
    try {
      parsePin(bad);
    } catch (e) {
      t.equal((e as ResolveError).code, 'bad_pin');
    }
  }
});

t.test('pins win over DNS; exact port before wildcard', async (t) => {
  const asked: string[] = [];
  const lookup: LookupFn = async (h) => {
    asked.push(h);
    return [{ address: '93.184.216.34', family: 4 }];
  };
  const r = createResolver({ pins: ['alpha.test:8080:127.0.0.1', 'alpha.test:*:127.0.0.2', 'beta.test:9090:127.0.0.3,::1'], lookup });
  t.same(await r.resolve('alpha.test', 8080), ['127.0.0.1']);
  t.same(await r.resolve('ALPHA.test.', 8080), ['127.0.0.1']);
  t.same(await r.resolve('alpha.test', 1234), ['127.0.0.2']);
  t.same(await r.resolve('beta.test', 9090), ['127.0.0.3', '::1']);
  t.same(asked, [], 'no lookup for pinned names');
  // A pin for another port does not apply: curl semantics.
  t.same(await r.resolve('beta.test', 80), ['93.184.216.34']);
  t.same(asked, ['beta.test']);
});

t.test('IP literals resolve to themselves without a lookup', async (t) => {
  const r = createResolver({ lookup: async () => t.fail('no lookup') as never });
  t.same(await r.resolve('10.0.0.1', 80), ['10.0.0.1']);
  t.same(await r.resolve('[::1]', 80), ['::1']);
});

t.test('every answer is returned, in order (the fetcher classifies each)', async (t) => {
  const r = createResolver({
    lookup: async () => [
      { address: '93.184.216.34', family: 4 },
      { address: '10.0.0.1', family: 4 },
    ],
  });
  t.same(await r.resolve('rebind.test', 80), ['93.184.216.34', '10.0.0.1']);
});

t.test('lookup failures become ResolveError codes', async (t) => {
  const notFound = createResolver({ lookup: async () => Promise.reject(Object.assign(new Error('x'), { code: 'ENOTFOUND' })) });
  await t.rejects(notFound.resolve('nx.test', 80), { code: 'not_found' });
  const empty = createResolver({ lookup: async () => [] });
  await t.rejects(empty.resolve('empty.test', 80), { code: 'not_found' });
  const broken = createResolver({ lookup: async () => Promise.reject(Object.assign(new Error('x'), { code: 'ESERVFAIL' })) });
  await t.rejects(broken.resolve('broken.test', 80), { code: 'lookup_failed' });
});
