/**
 * Name resolution for the crawler: the system resolver, unless a curl-style pin (CLI or SVC_RESOLVE, never the API)
 * wins for that host and port. It does not decide safety: the fetcher classifies every address it returns.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';

/** One address as dns.lookup returns it. */
export interface LookupAddress {
  readonly address: string;
  readonly family: number;
}

/** An injectable replacement for `dns.lookup(host, { all: true })`. */
export type LookupFn = (host: string) => Promise<readonly LookupAddress[]>;

/** A parsed `HOST:PORT:ADDR` pin. `port` null means any port (`HOST:*:ADDR`). */
export interface Pin {
  readonly host: string;
  readonly port: number | null;
  readonly addresses: readonly string[];
}

/** Resolves a host name to all its addresses, in order. */
export interface Resolver {
  resolve(host: string, port: number): Promise<string[]>;
}

/** Raised for a malformed pin or a failed lookup; `code` says which. */
export class ResolveError extends Error {
  override readonly name = 'ResolveError';
  constructor(
    readonly code: 'bad_pin' | 'not_found' | 'lookup_failed',
    message: string,
    opts?: { cause?: unknown },
  ) {
    super(message, opts);
  }
}

/**
 * Parses a curl-style pin `HOST:PORT:ADDR[,ADDR…]` (IPv4 or IPv6; PORT 1–65535 or `*`; host lower-cased, no trailing dot).
 * @example parsePin('alpha.test:8080:127.0.0.1') → { host: 'alpha.test', port: 8080, addresses: ['127.0.0.1'] }
 */
export function parsePin(text: string): Pin {
  const s = text.trim();
  const first = s.indexOf(':');
  const second = first < 0 ? -1 : s.indexOf(':', first + 1);
  if (first <= 0 || second < 0) throw new ResolveError('bad_pin', `pin must be HOST:PORT:ADDR, got "${text}"`);
  const host = s.slice(0, first).toLowerCase().replace(/\.$/, '');
  const portText = s.slice(first + 1, second);
  const addrText = s.slice(second + 1);
  if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(host))
    throw new ResolveError('bad_pin', `pin host "${host}" is not a host name`);
  let port: number | null = null;
  if (portText !== '*') {
    if (!/^\d{1,5}$/.test(portText) || Number(portText) < 1 || Number(portText) > 65535)
      throw new ResolveError('bad_pin', `pin port "${portText}" must be 1-65535 or *`);
    port = Number(portText);
  }
  const addresses = addrText.split(',').map((a) => {
    const t = a.trim();
    const bare = t.startsWith('[') && t.endsWith(']') ? t.slice(1, -1) : t;
    if (isIP(bare) === 0) throw new ResolveError('bad_pin', `pin address "${t}" is not an IP address`);
    return bare;
  });
  if (addresses.length === 0) throw new ResolveError('bad_pin', `pin "${text}" has no address`);
  return { host, port, addresses };
}

/** Options of {@link createResolver}. */
export interface ResolverOptions {
  /** curl-style `HOST:PORT:ADDR` pins, checked before DNS. @default [] */
  readonly pins?: readonly string[];
  /** Replacement for the system lookup (tests inject one that never touches the network). */
  readonly lookup?: LookupFn;
}

const systemLookup: LookupFn = (host) => dnsLookup(host, { all: true, verbatim: true });

/**
 * Creates a resolver: an exact pin for (host, port) first, then a `*` pin for the host, else the lookup.
 * An IP literal resolves to itself.
 */
export function createResolver(opts: ResolverOptions = {}): Resolver {
  const pins = (opts.pins ?? []).map(parsePin);
  const lookup = opts.lookup ?? systemLookup;
  return {
    async resolve(hostIn: string, port: number): Promise<string[]> {
      const host = hostIn.toLowerCase().replace(/\.$/, '');
      const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
      if (isIP(bare) !== 0) return [bare];
      const pin = pins.find((p) => p.host === host && p.port === port) ?? pins.find((p) => p.host === host && p.port === null);
      if (pin) return [...pin.addresses];
      let answers: readonly LookupAddress[];
      try {
        answers = await lookup(host);
      } catch (err) {
        const code = (err as { code?: string }).code;
        throw new ResolveError(code === 'ENOTFOUND' || code === 'ENODATA' ? 'not_found' : 'lookup_failed', `cannot resolve ${host}`, {
          cause: err,
        });
      }
      if (answers.length === 0) throw new ResolveError('not_found', `no address for ${host}`);
      return answers.map((a) => a.address);
    },
  };
}
