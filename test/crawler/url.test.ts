import t from 'tap';
import fc from 'fast-check';
import { hostOf, normalizeUrl, normalizePercentEncoding, originOf, pathAndQueryOf } from '../../crawler/url.js';

t.test('normalizeUrl: the normal form', async (t) => {
  const cases: [string, string | null][] = [
    ['HTTP://Example.COM/', 'http://example.com/'],
    ['http://example.com', 'http://example.com/'],
    ['http://example.com:80/a', 'http://example.com/a'],
    ['https://example.com:443/a', 'https://example.com/a'],
    ['https://example.com:8443/a', 'https://example.com:8443/a'],
    ['http://example.com/a/./b/../c', 'http://example.com/a/c'],
    ['http://example.com/a#frag', 'http://example.com/a'],
    ['http://example.com/a?', 'http://example.com/a'],
    ['http://example.com/a?q=1#x', 'http://example.com/a?q=1'],
    ['http://example.com/%7euser', 'http://example.com/~user'],
    ['http://example.com/%41%42c', 'http://example.com/ABc'],
    ['http://example.com/a%2fb', 'http://example.com/a%2Fb'],
    ['http://example.com/?q=%3d%7E', 'http://example.com/?q=%3D~'],
    ['http://example.com/caf\u00e9', 'http://example.com/caf%C3%A9'],
    ['http://bücher.example/', 'http://xn--bcher-kva.example/'],
    ['http://VILLE-QUÉBEC.test/', 'http://xn--ville-qubec-ibb.test/'],
    ['http://example.com./a', 'http://example.com/a'],
    ['  http://example.com/a  ', 'http://example.com/a'],
    ['http://2130706433/', 'http://127.0.0.1/'],
    ['http://0x7f.1/', 'http://127.0.0.1/'],
    ['http://[::FFFF:127.0.0.1]/', 'http://[::ffff:7f00:1]/'],
  ];
  for (const [input, want] of cases) t.equal(normalizeUrl(input), want, input);
});

t.test('normalizeUrl: refused inputs', async (t) => {
  for (const bad of [
    'ftp://example.com/',
    'file:///etc/passwd',
    'javascript:alert(1)',
    'mailto:a@example.com',
    'data:text/html,hi',
    'gopher://example.com/',
    'http://user@example.com/',
    'http://user:pw@example.com/',
    'https://:pw@example.com/',
    'not a url',
    '',
    'http://',
  ])
    t.equal(normalizeUrl(bad), null, JSON.stringify(bad));
});

t.test('normalizeUrl: relative to a base', async (t) => {
  t.equal(normalizeUrl('../x?y=1#z', 'http://example.com/a/b/c'), 'http://example.com/a/x?y=1');
  t.equal(normalizeUrl('//other.example/p', 'https://example.com/'), 'https://other.example/p');
  t.equal(normalizeUrl('mailto:x@y', 'https://example.com/'), null);
  t.equal(normalizeUrl('#only-fragment', 'https://example.com/a'), 'https://example.com/a');
});

t.test('normalizeUrl is idempotent (property)', async (t) => {
  const seg = fc.stringMatching(/^[a-zA-Z0-9%._~-]{0,8}$/);
  fc.assert(
    fc.property(fc.array(seg, { maxLength: 4 }), fc.boolean(), (segs, https) => {
      const once = normalizeUrl(`${https ? 'https' : 'http'}://Example.COM/${segs.join('/')}`);
      if (once === null) return true;
      return normalizeUrl(once) === once;
    }),
    { numRuns: 2000 },
  );
  t.pass('idempotent');
});

t.test('percent-encoding normalisation decodes only unreserved characters', async (t) => {
  t.equal(normalizePercentEncoding('%2f%2F%7e%41%20'), '%2F%2F~A%20');
  t.equal(normalizePercentEncoding('%%330'), '%2530', 'a bare % is escaped, so the decoded %33 cannot join it');
  t.equal(normalizePercentEncoding('100%'), '100%25');
  t.equal(normalizePercentEncoding('%2530'), '%2530', 'stable');
  t.equal(normalizeUrl('https://Example.COM/%%330'), 'https://example.com/%2530', 'the fuzzer’s counterexample (CI, session 29)');
});

t.test('hostOf / originOf / pathAndQueryOf', async (t) => {
  t.equal(hostOf('http://Alpha.TEST:8080/x'), 'alpha.test');
  t.equal(hostOf('http://[::1]:8080/x'), '[::1]');
  t.equal(originOf('http://alpha.test:8080/x?y'), 'http://alpha.test:8080');
  t.equal(pathAndQueryOf('http://alpha.test/a/b?c=d#e'), '/a/b?c=d');
  t.throws(() => hostOf('nope'));
});
