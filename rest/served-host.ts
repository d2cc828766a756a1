import type { IncomingMessage } from 'node:http';
import { networkInterfaces } from 'node:os';
import { isIP } from 'node:net';
import { SvcError } from '../errors.js';

/**
 * DNS-rebinding protection. A page on `evil.example` whose name was re-pointed at 127.0.0.1 reaches this server
 * with `Host: evil.example`; so every request's Host must be one of the names the service is served under, and a
 * browser's Origin must be this server's own origin (scheme, host and port) or one the operator listed.
 */
export interface ServedHosts {
  /** Whether a Host header value (`name` or `name:port`, IPv6 in brackets) names this service. */
  hostAllowed(host: string): boolean;
  /** Whether a browser Origin may call: an operator-listed origin, or exactly `http://<Host>` of an allowed Host. */
  originAllowed(origin: string, host: string): boolean;
}

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '::1'];
const WILDCARD_BINDS = new Set(['0.0.0.0', '::', '']);

/** `name` or `[v6]` (with an optional `:port`) → { name (lower case, IPv6 without brackets), port or null }. */
function splitHost(value: string): { name: string; port: string | null } | null {
  const v = value.trim().toLowerCase();
  const m = /^(?:\[([0-9a-f:.]+)\]|([^:[\]]+))(?::(\d{1,5}))?$/.exec(v);
  if (!m) return isIP(v) === 6 ? { name: v, port: null } : null; // a bare IPv6 literal in the configuration
  const name = (m[1] ?? m[2] ?? '').replace(/\.$/, '');
  return name === '' ? null : { name, port: m[3] ?? null };
}

/** RFC 3986 `host [":" port]` with an IP literal in brackets or a reg-name, and a port that exists. */
const HOST_VALUE = /^(?:\[[0-9a-f:.]+\]|[a-z0-9\-._~!$&'()*+,;=%]+)(?::(\d{1,5}))?$/i;

/**
 * RFC 9112 §3.2: a request must carry exactly one Host header with a valid value, and an absolute-form target's
 * authority must name the same host; anything else is a 400 (Node's own answer to a missing Host has no body, so
 * the server turns `requireHostHeader` off and this check answers instead). Returns the refusal, or null.
 */
export function hostHeaderProblem(req: IncomingMessage): SvcError | null {
  const refuse = (detail: string) => new SvcError('bad_request', detail);
  let count = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i]?.toLowerCase() === 'host') count++;
  if (count === 0) return refuse('the request has no Host header');
  if (count > 1) return refuse('the request has more than one Host header');
  const value = req.headers.host ?? '';
  const m = HOST_VALUE.exec(value);
  if (!m || Number(m[1] ?? 0) > 65535) return refuse('the Host header is not a valid host[:port]');
  const target = req.url ?? '/';
  if (target.startsWith('/') || target === '*') return null;
  // An absolute-form target (`GET http://host/path`) names its own authority, which must be the Host's.
  let authority: string;
  let host: string;
  try {
    const u = new URL(target);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return refuse('the request target is not an http(s) URL');
    authority = u.host;
    host = new URL(`${u.protocol}//${value}`).host;
  } catch {
    return refuse('the request target is not a valid URL');
  }
  return authority === host ? null : refuse('the request target names another host than the Host header');
}

/**
 * The served names: loopback names, the bind address (every interface address when bound to a wildcard), and
 * `extra` (config.allowedHosts: `name` matches any port, `name:port` only that port).
 */
export function servedHosts(opts: { bindHost: string; allowedHosts: readonly string[]; allowedOrigins: readonly string[] }): ServedHosts {
  const anyPort = new Set<string>(LOOPBACK_NAMES);
  const withPort = new Set<string>();
  const bind = opts.bindHost.trim().toLowerCase();
  if (WILDCARD_BINDS.has(bind)) {
    for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) anyPort.add(a.address.toLowerCase());
  } else {
    const b = splitHost(bind);
    if (b) anyPort.add(b.name);
  }
  for (const h of opts.allowedHosts) {
    const p = splitHost(h);
    if (!p) continue;
    if (p.port === null) anyPort.add(p.name);
    else withPort.add(`${p.name}:${Number(p.port)}`);
  }
  const origins = new Set<string>();
  for (const o of opts.allowedOrigins) {
    try {
      origins.add(new URL(o).origin);
    } catch {
      // A malformed configured origin allows nothing.
    }
  }
  const hostAllowed = (host: string): boolean => {
    const p = splitHost(host);
    if (!p) return false;
    return anyPort.has(p.name) || (p.port !== null && withPort.has(`${p.name}:${Number(p.port)}`));
  };
  return {
    hostAllowed,
    originAllowed: (origin, host) => {
      let o: URL;
      try {
        o = new URL(origin);
      } catch {
        return false; // includes the opaque "null" origin
      }
      if (origins.has(o.origin)) return true;
      if (!hostAllowed(host)) return false;
      // The server speaks plain HTTP (TLS ends in front of it, where a deployment lists its https origin).
      try {
        return o.origin === new URL(`http://${host}`).origin;
      } catch {
        return false;
      }
    },
  };
}
