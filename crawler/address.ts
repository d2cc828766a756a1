/**
 * IP address classification for SSRF safety: the fetcher refuses unless every resolved address is public (or allowed
 * loopback). IPv6 forms embedding IPv4 are classified by the embedded address, so `::ffff:10.0.0.1` is private.
 */
import { isIP } from 'node:net';

/** What an address is. Only `public` is reachable by default; `loopback` only with `allowLoopback`. */
export type AddressKind =
  | 'public'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'cgnat'
  | 'multicast'
  | 'broadcast'
  | 'unspecified'
  | 'reserved'
  | 'metadata'
  | 'documentation'
  | 'benchmarking'
  | 'teredo'
  | 'invalid';

/** The result of {@link classifyAddress}. */
export interface AddressClass {
  readonly kind: AddressKind;
  /** The address in canonical text form (IPv4 dotted quad, IPv6 compressed lower-case), or the input if invalid. */
  readonly ip: string;
  readonly version: 4 | 6 | 0;
  /** For IPv6 forms that carry an IPv4 address: which form, and that address. */
  readonly embedded?: { readonly form: 'ipv4-mapped' | 'ipv4-compatible' | 'nat64' | '6to4' | 'teredo'; readonly ipv4: string };
  /** Whether the crawler may connect: public always, loopback only when allowed, everything else never. */
  allowed(opts: { readonly allowLoopback: boolean }): boolean;
}

interface V4Range {
  readonly base: number;
  readonly bits: number;
  readonly kind: AddressKind;
}

const v4 = (dotted: string, bits: number, kind: AddressKind): V4Range => ({ base: ipv4ToInt(dotted) ?? 0, bits, kind });

/** Most specific first: the first containing range wins. */
const V4_RANGES: readonly V4Range[] = [
  v4('169.254.169.254', 32, 'metadata'), // AWS, GCP, Azure, OpenStack instance metadata
  v4('100.100.100.200', 32, 'metadata'), // Alibaba Cloud
  v4('192.0.0.192', 32, 'metadata'), // Oracle Cloud
  v4('255.255.255.255', 32, 'broadcast'),
  v4('0.0.0.0', 8, 'unspecified'), // "this network"
  v4('10.0.0.0', 8, 'private'),
  v4('100.64.0.0', 10, 'cgnat'),
  v4('127.0.0.0', 8, 'loopback'),
  v4('169.254.0.0', 16, 'link-local'),
  v4('172.16.0.0', 12, 'private'),
  v4('192.0.0.0', 24, 'reserved'), // IETF protocol assignments
  v4('192.0.2.0', 24, 'documentation'),
  v4('192.88.99.0', 24, 'reserved'), // deprecated 6to4 relay anycast
  v4('192.168.0.0', 16, 'private'),
  v4('198.18.0.0', 15, 'benchmarking'),
  v4('198.51.100.0', 24, 'documentation'),
  v4('203.0.113.0', 24, 'documentation'),
  v4('224.0.0.0', 4, 'multicast'),
  v4('240.0.0.0', 4, 'reserved'),
];

/** Parses a canonical dotted quad into an unsigned 32-bit integer, or null. */
function ipv4ToInt(s: string): number | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (!m) return null;
  let n = 0;
  for (let i = 1; i <= 4; i++) {
    const part = Number(m[i]);
    if (part > 255) return null;
    n = n * 256 + part;
  }
  return n;
}

const intToIpv4 = (n: number): string => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');

function classifyV4Int(n: number): AddressKind {
  for (const r of V4_RANGES) {
    const size = 2 ** (32 - r.bits);
    if (n >= r.base && n < r.base + size) return r.kind;
  }
  return 'public';
}

/**
 * Parses an IPv4 host the way WHATWG URL (and inet_aton) does: one to four parts, each decimal, octal (leading 0)
 * or hex (0x); the last part fills the remaining bytes. `2130706433`, `0177.0.0.1`, `0x7f.1` and `127.1` are all
 * 127.0.0.1. Returns the dotted quad, or null when the text is not such a literal.
 */
export function parseIPv4Literal(host: string): string | null {
  let s = host;
  if (s.endsWith('.')) s = s.slice(0, -1);
  const parts = s.split('.');
  if (parts.length < 1 || parts.length > 4) return null;
  const nums: number[] = [];
  for (const p of parts) {
    if (p === '') return null;
    let n: number;
    if (/^0[xX][0-9a-fA-F]*$/.test(p)) n = p.length === 2 ? 0 : parseInt(p.slice(2), 16);
    else if (/^0[0-7]+$/.test(p)) n = parseInt(p.slice(1), 8);
    else if (/^(0|[1-9][0-9]*)$/.test(p)) n = Number(p);
    else return null;
    if (!Number.isFinite(n)) return null;
    nums.push(n);
  }
  const last = nums[nums.length - 1] as number;
  for (let i = 0; i < nums.length - 1; i++) if ((nums[i] as number) > 255) return null;
  if (last >= 256 ** (5 - nums.length)) return null;
  let n = last;
  for (let i = 0; i < nums.length - 1; i++) n += (nums[i] as number) * 256 ** (3 - i);
  return intToIpv4(n);
}

/** Parses IPv6 text (with optional brackets, zone id or trailing dotted IPv4) into 8 groups, or null. */
function parseIPv6(text: string): number[] | null {
  let s = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  if (isIP(s) !== 6) return null;
  const lastColon = s.lastIndexOf(':');
  const maybeV4 = s.slice(lastColon + 1);
  if (maybeV4.includes('.')) {
    const n = ipv4ToInt(maybeV4);
    if (n === null) return null;
    // Rewrite the dotted tail as two hex groups so one parser handles both spellings.
    s = `${s.slice(0, lastColon + 1)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const [headText, tailText] = s.includes('::') ? s.split('::') : [s, undefined];
  const toGroups = (t: string | undefined): number[] => (t === undefined || t === '' ? [] : t.split(':').map((g) => parseInt(g, 16)));
  const head = toGroups(headText);
  const mid = toGroups(tailText);
  const total = head.length + mid.length;
  if (tailText === undefined) return head.length === 8 ? head : null;
  if (total > 7) return null;
  return [...head, ...new Array<number>(8 - total).fill(0), ...mid];
}

function groupsToText(g: readonly number[]): string {
  // RFC 5952: compress the longest run (≥ 2) of zero groups, first one on ties.
  let best = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (g[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > bestLen && j - i >= 2) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = g.map((x) => x.toString(16));
  if (best < 0) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`;
}

const inPrefix = (g: readonly number[], prefix: readonly number[], bits: number): boolean => {
  for (let i = 0; i < 8 && bits > 0; i++, bits -= 16) {
    const mask = bits >= 16 ? 0xffff : (0xffff << (16 - bits)) & 0xffff;
    if (((g[i] as number) & mask) !== ((prefix[i] ?? 0) & mask)) return false;
  }
  return true;
};

const v4FromGroups = (hi: number, lo: number): number => ((hi << 16) | lo) >>> 0;

function make(kind: AddressKind, ip: string, version: 4 | 6 | 0, embedded?: AddressClass['embedded']): AddressClass {
  return {
    kind,
    ip,
    version,
    ...(embedded ? { embedded } : {}),
    // Loopback reached through a tunnel or translator form (6to4, NAT64…) is not this machine: never allowed.
    allowed: ({ allowLoopback }) =>
      kind === 'public' || (kind === 'loopback' && allowLoopback && (embedded === undefined || embedded.form === 'ipv4-mapped')),
  };
}

function classifyV6(g: readonly number[], text: string): AddressClass {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  const embed = (form: NonNullable<AddressClass['embedded']>['form'], n: number, publicKind: AddressKind): AddressClass => {
    const inner = classifyV4Int(n);
    return make(inner === 'public' ? publicKind : inner, text, 6, { form, ipv4: intToIpv4(n) });
  };
  const firstSixZero = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  if (firstSixZero && g5 === 0 && g6 === 0 && g7 === 0) return make('unspecified', text, 6);
  if (firstSixZero && g5 === 0 && g6 === 0 && g7 === 1) return make('loopback', text, 6);
  if (firstSixZero && g5 === 0xffff) return embed('ipv4-mapped', v4FromGroups(g6, g7), 'public');
  // ::ffff:0:a.b.c.d (SIIT "IPv4-translated") is treated like a mapped address.
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0xffff && g5 === 0)
    return embed('ipv4-mapped', v4FromGroups(g6, g7), 'public');
  if (firstSixZero && g5 === 0) return embed('ipv4-compatible', v4FromGroups(g6, g7), 'reserved');
  if (inPrefix(g, [0x64, 0xff9b, 0, 0, 0, 0], 96)) return embed('nat64', v4FromGroups(g6, g7), 'public');
  if (inPrefix(g, [0x64, 0xff9b, 1], 48)) return make('private', text, 6); // local-use NAT64 (RFC 8215)
  if (inPrefix(g, [0xfd00, 0x0ec2], 32) && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0 && g6 === 0 && g7 === 0x254)
    return make('metadata', text, 6); // AWS IMDS over IPv6: fd00:ec2::254
  if (inPrefix(g, [0x2002], 16)) return embed('6to4', v4FromGroups(g1, g2), 'public');
  if (inPrefix(g, [0x2001, 0], 32)) {
    // Teredo: the client's IPv4 is the last 32 bits inverted. A tunnel endpoint is never a crawl target.
    const n = v4FromGroups(g6 ^ 0xffff, g7 ^ 0xffff);
    const inner = classifyV4Int(n);
    return make(inner === 'public' ? 'teredo' : inner, text, 6, { form: 'teredo', ipv4: intToIpv4(n) });
  }
  if (inPrefix(g, [0x2001, 0x2, 0], 48)) return make('benchmarking', text, 6);
  if (inPrefix(g, [0x2001, 0xdb8], 32)) return make('documentation', text, 6);
  if (inPrefix(g, [0x3fff], 20)) return make('documentation', text, 6); // RFC 9637
  if (inPrefix(g, [0x2001], 23)) return make('reserved', text, 6); // IETF protocol assignments (ORCHID etc.)
  if (inPrefix(g, [0x100, 0, 0, 0], 64)) return make('reserved', text, 6); // discard-only
  if (inPrefix(g, [0x5f00], 16)) return make('reserved', text, 6); // SRv6 SIDs
  if (inPrefix(g, [0xfc00], 7)) return make('private', text, 6); // unique local
  if (inPrefix(g, [0xfe80], 10)) return make('link-local', text, 6);
  if (inPrefix(g, [0xfec0], 10)) return make('private', text, 6); // deprecated site-local
  if (inPrefix(g, [0xff00], 8)) return make('multicast', text, 6);
  if (inPrefix(g, [0x2000], 3)) return make('public', text, 6);
  return make('reserved', text, 6);
}

/**
 * Classifies an IP address given as text: IPv4 (canonical or hostile literal forms), IPv6 (with or without
 * brackets/zone). Anything that is not an address is `invalid` and never allowed.
 */
export function classifyAddress(ip: string): AddressClass {
  const text = ip.trim();
  if (isIP(text) === 4) {
    const n = ipv4ToInt(text) as number;
    return make(classifyV4Int(n), intToIpv4(n), 4);
  }
  const groups = parseIPv6(text);
  if (groups) return classifyV6(groups, groupsToText(groups));
  const lit = parseIPv4Literal(text);
  if (lit !== null) return make(classifyV4Int(ipv4ToInt(lit) as number), lit, 4);
  return make('invalid', text, 0);
}

/**
 * The IP address a URL host names literally (after WHATWG canonicalisation, brackets removed), or null when the
 * host is a name that must be resolved.
 */
export function ipLiteralOf(hostname: string): string | null {
  const h = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  if (isIP(h) !== 0) return h;
  return parseIPv4Literal(h);
}
