import t from 'tap';
import { classifyAddress, ipLiteralOf, parseIPv4Literal, type AddressKind } from '../../crawler/address.js';

const LOOPBACK_OK = { allowLoopback: true };
const PROD = { allowLoopback: false };

t.test('IPv4 ranges', async (t) => {
  const cases: [string, AddressKind][] = [
    ['8.8.8.8', 'public'],
    ['1.1.1.1', 'public'],
    ['142.250.72.14', 'public'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.32.0.1', 'public'],
    ['192.168.1.1', 'private'],
    ['169.254.1.1', 'link-local'],
    ['169.254.169.254', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['192.0.0.192', 'metadata'],
    ['100.64.0.1', 'cgnat'],
    ['100.127.255.255', 'cgnat'],
    ['100.128.0.1', 'public'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    ['192.0.2.1', 'documentation'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.9', 'documentation'],
    ['198.18.0.1', 'benchmarking'],
    ['198.19.255.255', 'benchmarking'],
    ['192.0.0.8', 'reserved'],
    ['192.88.99.1', 'reserved'],
  ];
  for (const [ip, kind] of cases) {
    const c = classifyAddress(ip);
    t.equal(c.kind, kind, ip);
    t.equal(c.version, 4, `${ip} is v4`);
    t.equal(c.allowed(PROD), kind === 'public', `${ip} allowed in production only if public`);
  }
});

t.test('IPv6 ranges and IPv4-embedding forms', async (t) => {
  const cases: [string, AddressKind, string?][] = [
    ['2606:4700:4700::1111', 'public'],
    ['2001:4860:4860::8888', 'public'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['::', 'unspecified'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['fec0::1', 'private'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'documentation'],
    ['3fff::1', 'documentation'],
    ['2001:2::1', 'benchmarking'],
    ['100::1', 'reserved'],
    ['fd00:ec2::254', 'metadata'],
    ['::ffff:127.0.0.1', 'loopback', '127.0.0.1'],
    ['::ffff:7f00:1', 'loopback', '127.0.0.1'],
    ['::ffff:10.0.0.1', 'private', '10.0.0.1'],
    ['::ffff:169.254.169.254', 'metadata', '169.254.169.254'],
    ['::ffff:8.8.8.8', 'public', '8.8.8.8'],
    ['::10.0.0.1', 'private', '10.0.0.1'],
    ['::8.8.8.8', 'reserved', '8.8.8.8'],
    ['64:ff9b::10.0.0.1', 'private', '10.0.0.1'],
    ['64:ff9b::a9fe:a9fe', 'metadata', '169.254.169.254'],
    ['64:ff9b::8.8.8.8', 'public', '8.8.8.8'],
    ['64:ff9b:1::1', 'private'],
    ['2002:7f00:1::1', 'loopback', '127.0.0.1'],
    ['2002:c0a8:101::1', 'private', '192.168.1.1'],
    ['2002:0808:0808::1', 'public', '8.8.8.8'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'documentation', '192.0.2.45'], // Teredo, RFC 4380 example
    ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', 'teredo', '8.8.8.8'],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'loopback', '127.0.0.1'],
  ];
  for (const [ip, kind, v4] of cases) {
    const c = classifyAddress(ip);
    t.equal(c.kind, kind, ip);
    if (v4) t.equal(c.embedded?.ipv4, v4, `${ip} embeds ${v4}`);
    t.equal(c.allowed(PROD), kind === 'public', `${ip} production`);
  }
});

t.test('allowLoopback lets only real loopback through', async (t) => {
  t.equal(classifyAddress('127.0.0.1').allowed(LOOPBACK_OK), true);
  t.equal(classifyAddress('::1').allowed(LOOPBACK_OK), true);
  t.equal(classifyAddress('::ffff:127.0.0.1').allowed(LOOPBACK_OK), true);
  // A 6to4 / NAT64 / Teredo spelling of 127.0.0.1 is routed elsewhere, never to this machine.
  t.equal(classifyAddress('2002:7f00:1::1').allowed(LOOPBACK_OK), false);
  t.equal(classifyAddress('64:ff9b::7f00:1').allowed(LOOPBACK_OK), false);
  t.equal(classifyAddress('2001:0:4136:e378:8000:63bf:80ff:fffe').allowed(LOOPBACK_OK), false);
  for (const ip of ['10.0.0.1', '169.254.169.254', 'fd00:ec2::254', '0.0.0.0', '::', 'fe80::1', '100.64.0.1'])
    t.equal(classifyAddress(ip).allowed(LOOPBACK_OK), false, `${ip} stays blocked with loopback allowed`);
});

t.test('hostile IPv4 literal forms', async (t) => {
  const forms: [string, string][] = [
    ['2130706433', '127.0.0.1'],
    ['0177.0.0.1', '127.0.0.1'],
    ['0x7f.1', '127.0.0.1'],
    ['0x7f000001', '127.0.0.1'],
    ['127.1', '127.0.0.1'],
    ['127.0.1', '127.0.0.1'],
    ['017700000001', '127.0.0.1'],
    ['0xA9.0xFE.0xA9.0xFE', '169.254.169.254'],
    ['2852039166', '169.254.169.254'],
    ['167772161', '10.0.0.1'],
    ['012.0.0.1', '10.0.0.1'],
    ['10.1', '10.0.0.1'],
    ['0', '0.0.0.0'],
    ['0x', '0.0.0.0'],
    ['127.0.0.1.', '127.0.0.1'],
  ];
  for (const [lit, want] of forms) {
    t.equal(parseIPv4Literal(lit), want, lit);
    t.equal(classifyAddress(lit).ip, want, `classify ${lit}`);
    t.equal(classifyAddress(lit).allowed(PROD), false, `${lit} refused`);
    // WHATWG URL canonicalises the same spellings, so a URL host reaches the classifier as a dotted quad.
    t.equal(new URL(`http://${lit}/`).hostname, want, `WHATWG ${lit}`);
  }
  for (const notLit of ['example.com', '1.2.3.4.5', '256.1.1.1', '08.0.0.1', '1.2.3.0x1g', '4294967296'])
    t.equal(parseIPv4Literal(notLit), null, notLit);
});

t.test('ipLiteralOf tells names from addresses', async (t) => {
  t.equal(ipLiteralOf('[::1]'), '::1');
  t.equal(ipLiteralOf('127.0.0.1'), '127.0.0.1');
  t.equal(ipLiteralOf('0x7f.1'), '127.0.0.1');
  t.equal(ipLiteralOf('alpha.test'), null);
});

t.test('invalid input is never allowed', async (t) => {
  for (const x of ['', 'localhost', 'example.com', '::ffff:999.1.1.1', '1:2:3']) {
    t.equal(classifyAddress(x).kind, 'invalid', JSON.stringify(x));
    t.equal(classifyAddress(x).allowed(LOOPBACK_OK), false);
  }
});

t.test('properties: mapped and NAT64 forms classify like the IPv4 address they carry', async (t) => {
  const fc = (await import('fast-check')).default;
  const quad = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((p) => p.join('.'));
  fc.assert(
    fc.property(quad, (ip) => {
      const v4 = classifyAddress(ip);
      const mapped = classifyAddress(`::ffff:${ip}`);
      const nat64 = classifyAddress(`64:ff9b::${ip}`);
      return (
        mapped.kind === v4.kind && nat64.kind === v4.kind && mapped.embedded?.ipv4 === ip && v4.allowed(PROD) === (v4.kind === 'public')
      );
    }),
    { numRuns: 2000 },
  );
  // Every hostile single-number spelling of an address classifies exactly like its dotted quad.
  fc.assert(
    fc.property(fc.nat(0xffffffff), (n) => {
      const dotted = [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
      return classifyAddress(String(n)).kind === classifyAddress(dotted).kind && classifyAddress(`0x${n.toString(16)}`).ip === dotted;
    }),
    { numRuns: 2000 },
  );
  t.pass('properties hold');
});
