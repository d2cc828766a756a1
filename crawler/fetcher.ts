/**
 * The SSRF-safe fetcher: per hop, resolve the name once, refuse if any address is blocked, and connect to a
 * validated address ourselves so nothing resolves it again; redirects are followed by hand so every hop is checked.
 * GET and HEAD only, bounded bytes, deadlines and minimum rate; no cookies or caller headers.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { connect as netConnect, isIP } from 'node:net';
import { pipeline, type Duplex, type Readable } from 'node:stream';
import { checkServerIdentity, connect as tlsConnect } from 'node:tls';
import { createBrotliDecompress, createUnzip, constants as zlibConstants } from 'node:zlib';
import { classifyAddress, ipLiteralOf } from './address.js';
import { USER_AGENT_TOKEN } from './directives.js';
import { ResolveError, type Resolver } from './resolver.js';

/** Why a fetch failed. */
export type FetchErrorKind =
  | 'blocked_address'
  | 'dns'
  | 'bad_scheme'
  | 'credentials'
  | 'connect'
  | 'timeout'
  | 'slow_transfer'
  | 'too_large'
  | 'too_many_redirects'
  | 'redirect_loop'
  | 'decompression'
  | 'protocol';

/** Whether trying again later can succeed, per kind (the frontier's retry policy reads this). */
export const FETCH_ERROR_RETRYABLE: Readonly<Record<FetchErrorKind, boolean>> = {
  blocked_address: false,
  dns: true,
  bad_scheme: false,
  credentials: false,
  connect: true,
  timeout: true,
  slow_transfer: true,
  too_large: false,
  too_many_redirects: false,
  redirect_loop: false,
  decompression: false,
  protocol: true,
};

/** A failed fetch. `kind` is stable API; the message is for logs only. */
export class FetchError extends Error {
  override readonly name = 'FetchError';
  readonly kind: FetchErrorKind;
  readonly retryable: boolean;
  /** The URL of the hop that failed. */
  readonly url: string | undefined;
  constructor(kind: FetchErrorKind, message: string, opts: { url?: string; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.kind = kind;
    this.retryable = FETCH_ERROR_RETRYABLE[kind];
    this.url = opts.url;
  }
}

export const isFetchError = (e: unknown): e is FetchError => e instanceof FetchError;

/** Where the fetcher wants a socket: an already validated address, and the name for the Host header and SNI. */
export interface ConnectTarget {
  readonly address: string;
  readonly port: number;
  /** Host name from the URL (SNI and certificate check for https). */
  readonly servername: string;
  readonly tls: boolean;
  /** Aborted when the connect deadline passes; a connector must then destroy its socket. */
  readonly signal: AbortSignal;
}

/** Opens a connected socket (TLS already established for https). Injected by tests to record and refuse attempts. */
export type Connector = (target: ConnectTarget) => Promise<Duplex>;

/** Options of {@link createFetcher}. */
export interface FetcherOptions {
  /** Full User-Agent header, e.g. `SvcBot/0.1.0 (+https://svc.invalid/webmasters)`; see {@link svcBotUserAgent}. */
  readonly userAgent: string;
  readonly resolver: Resolver;
  /** Let loopback addresses through (the local test web). Never settable through the API. */
  readonly allowLoopback: boolean;
  /** Largest decoded body, in bytes. @default 5 MiB */
  readonly maxBytes?: number;
  /** Redirects followed per fetch. @default 5 */
  readonly maxRedirects?: number;
  /** @default 5000 */
  readonly connectTimeoutMs?: number;
  /** From request sent to response headers received. @default 10000 */
  readonly headersTimeoutMs?: number;
  /** Whole fetch, all hops and the body included. @default 30000 */
  readonly totalTimeoutMs?: number;
  /** Below this rate over a window the transfer is cut (`slow_transfer`); 0 disables. @default 1024 */
  readonly minBytesPerSec?: number;
  /** Window over which `minBytesPerSec` is measured. @default 5000 */
  readonly slowWindowMs?: number;
  /** Content-Encoding layers accepted (gzip, deflate, br). @default 2 */
  readonly maxDecodeLayers?: number;
  /** Socket opener; the default connects with node:net / node:tls to the given address. */
  readonly connector?: Connector;
}

/** Per-request options of {@link Fetcher.fetch}. */
export interface FetchOptions {
  /** @default 'GET' */
  readonly method?: 'GET' | 'HEAD';
  readonly headers?: { readonly 'if-none-match'?: string; readonly 'if-modified-since'?: string; readonly accept?: string };
  /** @default true */
  readonly followRedirects?: boolean;
  /** Called before each redirect hop, after the scheme check; throw to refuse (the error propagates as is). */
  readonly beforeRedirect?: (next: URL) => Promise<void>;
  /** Lower cap for this request (e.g. robots.txt). Cannot raise the fetcher's cap. */
  readonly maxBytes?: number;
  /** Return the first `maxBytes` with `truncated: true` instead of failing with `too_large` (robots.txt: §2.5). */
  readonly truncate?: boolean;
}

/** A completed exchange (any status). */
export interface FetchResult {
  readonly requestedUrl: string;
  /** Final URL after redirects. */
  readonly url: string;
  readonly status: number;
  /** Lower-case names; repeated headers joined with ", "; Set-Cookie dropped. */
  readonly headers: Record<string, string>;
  /** Decoded body (empty for HEAD, 304, and unfollowed redirects). */
  readonly body: Buffer;
  /** Every URL redirected to, in order. */
  readonly redirects: string[];
  /** The IP address the final hop connected to. */
  readonly address: string;
  /** True only when `truncate` was requested and the body was cut at the cap. */
  readonly truncated: boolean;
}

export interface Fetcher {
  fetch(url: string, opts?: FetchOptions): Promise<FetchResult>;
}

/** `SvcBot/<version> (+<info url>)`. */
export function svcBotUserAgent(version: string, infoUrl: string): string {
  return `${USER_AGENT_TOKEN}/${version} (+${infoUrl})`;
}

/**
 * Parses a Retry-After value (delay-seconds or HTTP-date) into milliseconds from `now`, or null when absent or
 * malformed. A date in the past gives 0.
 */
export function parseRetryAfter(value: string | null | undefined, now: number | Date = Date.now()): number | null {
  if (value === null || value === undefined) return null;
  const v = value.trim();
  if (v === '') return null;
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  if (!/[a-zA-Z]/.test(v)) return null; // "1.5", "-3": not a valid delay-seconds nor a date
  const t = Date.parse(v);
  if (Number.isNaN(t)) return null;
  const nowMs = typeof now === 'number' ? now : now.getTime();
  return Math.max(0, t - nowMs);
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const DEFAULT_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,text/plain;q=0.8,*/*;q=0.5';

/** Options of {@link createConnector}. */
export interface ConnectorOptions {
  /** Extra trusted CA certificates (PEM) for https, e.g. an operator's internal CA or a test CA. */
  readonly ca?: string | Buffer | readonly (string | Buffer)[];
}

/**
 * A connector that opens a plain or TLS socket to exactly the validated address. For https the certificate is
 * checked against the URL's host name, which is also sent as SNI (not for IP-literal hosts).
 */
export function createConnector(opts: ConnectorOptions = {}): Connector {
  return ({ address, port, servername, tls, signal }) =>
    new Promise<Duplex>((resolve, reject) => {
      const sock = tls
        ? tlsConnect({
            host: address,
            port,
            ALPNProtocols: ['http/1.1'],
            ...(isIP(servername) === 0 ? { servername } : {}),
            // The certificate must match the name we were asked for, not the address we connect to.
            checkServerIdentity: (_host, cert) => checkServerIdentity(servername, cert),
            ...(opts.ca === undefined ? {} : { ca: opts.ca as string | Buffer | (string | Buffer)[] }),
          })
        : netConnect({ host: address, port });
      const onAbort = () => sock.destroy(new Error('connect aborted'));
      signal.addEventListener('abort', onAbort, { once: true });
      sock.once(tls ? 'secureConnect' : 'connect', () => {
        signal.removeEventListener('abort', onAbort);
        sock.removeListener('error', reject);
        resolve(sock);
      });
      sock.once('error', (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      });
    });
}

/** The default connector (system CAs). */
export const defaultConnector: Connector = createConnector();

function flattenHeaders(h: IncomingMessage['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) {
    if (v === undefined || k === 'set-cookie') continue;
    out[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

function decoderFor(enc: string): Duplex | null {
  // Unzip auto-detects gzip and zlib-wrapped deflate; flush modes let a truncated stream end as an error, not hang.
  if (enc === 'gzip' || enc === 'x-gzip' || enc === 'deflate') return createUnzip({ finishFlush: zlibConstants.Z_SYNC_FLUSH });
  if (enc === 'br') return createBrotliDecompress();
  return null;
}

/** Creates a fetcher. See the module comment for the rules it enforces. */
export function createFetcher(opts: FetcherOptions): Fetcher {
  const maxBytesDefault = opts.maxBytes ?? 5 * 1024 * 1024;
  const maxRedirects = opts.maxRedirects ?? 5;
  const connectTimeoutMs = opts.connectTimeoutMs ?? 5000;
  const headersTimeoutMs = opts.headersTimeoutMs ?? 10_000;
  const totalTimeoutMs = opts.totalTimeoutMs ?? 30_000;
  const minBytesPerSec = opts.minBytesPerSec ?? 1024;
  const slowWindowMs = opts.slowWindowMs ?? 5000;
  const maxDecodeLayers = opts.maxDecodeLayers ?? 2;
  const connector = opts.connector ?? defaultConnector;

  async function fetchOnce(
    url: URL,
    method: 'GET' | 'HEAD',
    fo: FetchOptions,
    deadline: Deadline,
  ): Promise<{ status: number; headers: Record<string, string>; body: Buffer; address: string; truncated: boolean }> {
    const href = url.href;
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new FetchError('bad_scheme', `scheme ${url.protocol} refused`, { url: href });
    if (url.username !== '' || url.password !== '') throw new FetchError('credentials', 'URLs with credentials are refused', { url: href });
    const tls = url.protocol === 'https:';
    const port = url.port === '' ? (tls ? 443 : 80) : Number(url.port);
    const hostname = url.hostname;
    // Brackets belong to URL syntax only: SNI, the classifier and the resolver get the bare name or address.
    const bareHost = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;

    // Resolve once; every answer must pass.
    const literal = ipLiteralOf(hostname);
    let addresses: string[];
    if (literal !== null) addresses = [literal];
    else {
      try {
        addresses = await deadline.race(opts.resolver.resolve(hostname, port));
      } catch (err) {
        if (err instanceof FetchError) throw err;
        throw new FetchError('dns', err instanceof ResolveError ? err.message : `cannot resolve ${hostname}`, { url: href, cause: err });
      }
    }
    if (addresses.length === 0) throw new FetchError('dns', `no address for ${hostname}`, { url: href });
    for (const a of addresses) {
      const c = classifyAddress(a);
      if (!c.allowed({ allowLoopback: opts.allowLoopback }))
        throw new FetchError('blocked_address', `${hostname} resolves to ${c.ip} (${c.kind})`, { url: href });
    }

    // Connect to the first validated address that answers.
    let socket: Duplex | undefined;
    let address = '';
    let lastErr: unknown;
    for (const a of addresses) {
      const ac = new AbortController();
      const timer = setTimeout(() => ac.abort(), Math.min(connectTimeoutMs, deadline.remaining()));
      const attempt = connector({ address: a, port, servername: bareHost, tls, signal: ac.signal });
      try {
        socket = await deadline.race(attempt);
        address = a;
        break;
      } catch (err) {
        const timedOut = ac.signal.aborted;
        // A socket that connects after we gave up must not leak.
        ac.abort();
        attempt.then(
          (s) => s.destroy(),
          () => {},
        );
        if (err instanceof FetchError) throw err;
        lastErr = timedOut ? new FetchError('timeout', `connect to ${a}:${port} timed out`, { url: href }) : err;
      } finally {
        clearTimeout(timer);
      }
    }
    if (!socket) {
      if (lastErr instanceof FetchError) throw lastErr;
      throw new FetchError('connect', `cannot connect to ${hostname}:${port}`, { url: href, cause: lastErr });
    }
    const sock = socket;

    const hostHeader = url.port === '' ? hostname : `${hostname}:${url.port}`;
    const headers: Record<string, string> = {
      host: hostHeader,
      'user-agent': opts.userAgent,
      accept: fo.headers?.accept ?? DEFAULT_ACCEPT,
      'accept-encoding': 'gzip, deflate, br',
      connection: 'close',
    };
    if (fo.headers?.['if-none-match']) headers['if-none-match'] = fo.headers['if-none-match'];
    if (fo.headers?.['if-modified-since']) headers['if-modified-since'] = fo.headers['if-modified-since'];

    return await new Promise((resolve, reject) => {
      let settled = false;
      const cleanups: (() => void)[] = [];
      const finish = (err: unknown, value?: Parameters<typeof resolve>[0]) => {
        if (settled) return;
        settled = true;
        for (const c of cleanups) c();
        // One request per connection: the socket is never reused, whatever the outcome.
        sock.destroy();
        if (err) reject(err);
        else resolve(value as Parameters<typeof resolve>[0]);
      };
      cleanups.push(
        deadline.onExpire(() => {
          const e = new FetchError('timeout', `total time limit reached for ${href}`, { url: href });
          finish(e);
          req.destroy(e);
        }),
      );

      const req = httpRequest({
        method,
        path: `${url.pathname}${url.search}`,
        headers,
        setHost: false,
        createConnection: () => sock as never,
      });
      const headersTimer = setTimeout(() => {
        const e = new FetchError('timeout', `no response headers within ${headersTimeoutMs} ms`, { url: href });
        finish(e);
        req.destroy(e);
      }, headersTimeoutMs);
      cleanups.push(() => clearTimeout(headersTimer));
      req.on('error', (err) =>
        finish(err instanceof FetchError ? err : new FetchError('protocol', `request failed: ${err.message}`, { url: href, cause: err })),
      );
      req.on('response', (res) => {
        clearTimeout(headersTimer);
        const status = res.statusCode ?? 0;
        const h = flattenHeaders(res.headers);
        const noBody = method === 'HEAD' || status === 204 || status === 304 || (status >= 100 && status < 200);
        const isRedirect = REDIRECT_STATUSES.has(status) && h.location !== undefined;
        if (noBody || isRedirect) {
          res.resume();
          sock.destroy();
          finish(null, { status, headers: h, body: Buffer.alloc(0), address, truncated: false });
          return;
        }
        const encodings = (h['content-encoding'] ?? '')
          .split(',')
          .map((e) => e.trim().toLowerCase())
          .filter((e) => e !== '' && e !== 'identity');
        if (encodings.length > maxDecodeLayers) {
          finish(new FetchError('decompression', `${encodings.length} content-encoding layers (max ${maxDecodeLayers})`, { url: href }));
          return;
        }
        const decoders: Duplex[] = [];
        for (const enc of [...encodings].reverse()) {
          const d = decoderFor(enc);
          if (!d) {
            finish(new FetchError('decompression', `unsupported content-encoding ${enc}`, { url: href }));
            return;
          }
          decoders.push(d);
        }
        const cap = Math.min(fo.maxBytes ?? maxBytesDefault, maxBytesDefault);
        const declared = Number(h['content-length'] ?? NaN);
        if (!fo.truncate && Number.isFinite(declared) && declared > cap) {
          // Declared too big: refuse without reading a byte of it.
          finish(new FetchError('too_large', `Content-Length ${declared} exceeds ${cap} bytes`, { url: href }));
          return;
        }
        let rawBytes = 0;
        let windowBytes = 0;
        res.on('data', (c: Buffer) => {
          rawBytes += c.length;
          windowBytes += c.length;
          // Compressed input larger than the decoded cap cannot decode to less; stop early.
          if (rawBytes > cap && !fo.truncate) {
            const e = new FetchError('too_large', `body exceeds ${cap} bytes`, { url: href });
            finish(e);
            res.destroy(e);
          }
        });
        if (minBytesPerSec > 0) {
          const iv = setInterval(() => {
            if (windowBytes < (minBytesPerSec * slowWindowMs) / 1000) {
              const e = new FetchError('slow_transfer', `below ${minBytesPerSec} B/s for ${slowWindowMs} ms`, { url: href });
              finish(e);
              res.destroy(e);
            }
            windowBytes = 0;
          }, slowWindowMs);
          cleanups.push(() => clearInterval(iv));
        }
        const out: Readable = decoders.length === 0 ? res : (pipeline([res, ...decoders] as never, () => {}) as unknown as Readable);
        const chunks: Buffer[] = [];
        let size = 0;
        out.on('data', (c: Buffer) => {
          if (settled) return;
          if (size + c.length > cap) {
            if (fo.truncate) {
              chunks.push(c.subarray(0, cap - size));
              size = cap;
              finish(null, { status, headers: h, body: Buffer.concat(chunks, size), address, truncated: true });
              res.destroy();
              sock.destroy();
              for (const d of decoders) d.destroy();
              return;
            }
            const e = new FetchError('too_large', `decoded body exceeds ${cap} bytes`, { url: href });
            finish(e);
            res.destroy(e);
            for (const d of decoders) d.destroy();
            return;
          }
          chunks.push(c);
          size += c.length;
        });
        out.on('end', () => finish(null, { status, headers: h, body: Buffer.concat(chunks, size), address, truncated: false }));
        out.on('error', (err: Error & { code?: string }) => {
          if (err instanceof FetchError) finish(err);
          else if (
            decoders.length > 0 &&
            (err.code?.startsWith('Z_') ||
              err.code?.startsWith('ERR_BROTLI') ||
              /zlib|deflate|gzip|brotli|header check|unexpected end/i.test(err.message))
          )
            finish(new FetchError('decompression', `cannot decode body: ${err.message}`, { url: href, cause: err }));
          else finish(new FetchError('protocol', `body read failed: ${err.message}`, { url: href, cause: err }));
        });
        res.on('aborted', () => finish(new FetchError('protocol', 'connection closed mid-body', { url: href })));
        res.on('error', (err) => {
          if (err instanceof FetchError) finish(err);
          else finish(new FetchError('protocol', `body read failed: ${err.message}`, { url: href, cause: err }));
        });
      });
      req.end();
    });
  }

  return {
    async fetch(input: string, fo: FetchOptions = {}): Promise<FetchResult> {
      const method = fo.method ?? 'GET';
      if (method !== 'GET' && method !== 'HEAD') throw new FetchError('protocol', `method ${String(method)} refused`);
      let url: URL;
      try {
        url = new URL(input);
      } catch (err) {
        throw new FetchError('protocol', `invalid URL ${input}`, { url: input, cause: err });
      }
      const deadline = new Deadline(totalTimeoutMs, input);
      try {
        const redirects: string[] = [];
        const seen = new Set<string>([withoutHash(url)]);
        for (;;) {
          const r = await fetchOnce(url, method, fo, deadline);
          const location = r.headers.location;
          if (fo.followRedirects === false || !REDIRECT_STATUSES.has(r.status) || location === undefined) {
            return { requestedUrl: input, url: url.href, redirects, ...r };
          }
          let next: URL;
          try {
            next = new URL(location, url);
          } catch (err) {
            throw new FetchError('protocol', `bad Location ${location}`, { url: url.href, cause: err });
          }
          if (next.protocol !== 'http:' && next.protocol !== 'https:')
            throw new FetchError('bad_scheme', `redirect to scheme ${next.protocol} refused`, { url: next.href });
          if (next.username !== '' || next.password !== '')
            throw new FetchError('credentials', 'redirect to a URL with credentials refused', { url: next.href });
          next.hash = '';
          if (seen.has(withoutHash(next))) throw new FetchError('redirect_loop', `redirect loop at ${next.href}`, { url: next.href });
          if (redirects.length >= maxRedirects)
            throw new FetchError('too_many_redirects', `more than ${maxRedirects} redirects`, { url: next.href });
          if (fo.beforeRedirect) await deadline.race(fo.beforeRedirect(next));
          seen.add(withoutHash(next));
          redirects.push(next.href);
          url = next;
        }
      } finally {
        deadline.dispose();
      }
    },
  };
}

const withoutHash = (u: URL): string => {
  const c = new URL(u.href);
  c.hash = '';
  return c.href;
};

/** One deadline shared by every step of a fetch. */
class Deadline {
  private readonly end: number;
  private readonly listeners = new Set<() => void>();
  private readonly timer: NodeJS.Timeout;
  private expired = false;
  constructor(
    ms: number,
    private readonly url: string,
  ) {
    this.end = Date.now() + ms;
    this.timer = setTimeout(() => {
      this.expired = true;
      for (const l of [...this.listeners]) l();
    }, ms);
  }
  remaining(): number {
    return Math.max(0, this.end - Date.now());
  }
  /** Registers a callback for expiry; returns its removal. */
  onExpire(fn: () => void): () => void {
    if (this.expired) {
      queueMicrotask(fn);
      return () => {};
    }
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }
  /** Rejects with `timeout` when the deadline passes first. */
  race<T>(p: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const off = this.onExpire(() => reject(new FetchError('timeout', `total time limit reached for ${this.url}`, { url: this.url })));
      p.then(
        (v) => {
          off();
          resolve(v);
        },
        (e: unknown) => {
          off();
          reject(e);
        },
      );
    });
  }
  dispose(): void {
    clearTimeout(this.timer);
    this.listeners.clear();
  }
}
