/**
 * robots.txt (RFC 9309) for the token SvcBot, following Google's reference implementation (github.com/google/robotstxt)
 * so it passes that test suite byte for byte, tolerated typos included. {@link RobotsCache} adds the fetching rules
 * (matching rules: docs/api-crawler-rules.md#robotstxt-matching).
 */
import type { Fetcher, FetchResult } from './fetcher.js';
import { USER_AGENT_TOKEN } from './directives.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { isFetchError } from './fetcher.js';
import type { RobotsRepo, SharedRobots } from '../state/repos/types.js';

/** Bytes of robots.txt we parse; RFC 9309 §2.5 requires at least 500 KiB. */
export const ROBOTS_PARSE_LIMIT = 500 * 1024;
/** Google's line cap (8 × 2083 bytes); longer lines are cut there. */
const MAX_LINE_LEN = 2083 * 8;

/** One recognised line, in file order. Values of allow/disallow are already percent-normalised. */
export type RobotsLine =
  | { readonly type: 'user-agent'; readonly line: number; readonly value: string }
  | { readonly type: 'allow' | 'disallow'; readonly line: number; readonly value: string }
  | { readonly type: 'sitemap'; readonly line: number; readonly value: string }
  | { readonly type: 'unknown'; readonly line: number; readonly key: string; readonly value: string };

/** A parsed robots.txt. Query it with {@link robotsAllows}, {@link crawlDelay}, {@link sitemaps}. */
export interface RobotsTxt {
  readonly lines: readonly RobotsLine[];
  /** user-agent, allow, disallow and sitemap lines. */
  readonly validDirectives: number;
  /** key: value lines with an unknown key (e.g. crawl-delay, noindex). */
  readonly unknownDirectives: number;
  /** Number of the last line holding a directive (1-based), 0 if none. */
  readonly lastDirectiveLine: number;
  /** Lines in the file (a final newline opens one more, empty line). */
  readonly lineCount: number;
  /** True when the input was longer than {@link ROBOTS_PARSE_LIMIT} and the rest was ignored. */
  readonly truncated: boolean;
}

const HEX = '0123456789ABCDEF';
const isHex = (b: number | undefined): boolean =>
  b !== undefined && ((b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66));

/**
 * Percent-encodes octets ≥ 0x80 and upper-cases existing escapes, as rule patterns are compared in that form
 * (`/SanJosé` → `/SanJos%C3%A9`, `%aa` → `%AA`).
 */
export function escapePattern(input: string | Uint8Array): string {
  const bytes = typeof input === 'string' ? Buffer.from(input, 'utf8') : input;
  let out = '';
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i] as number;
    if (b === 0x25 && isHex(bytes[i + 1]) && isHex(bytes[i + 2])) {
      out += `%${String.fromCharCode(bytes[i + 1] as number).toUpperCase()}${String.fromCharCode(bytes[i + 2] as number).toUpperCase()}`;
      i += 2;
    } else if (b & 0x80) out += `%${HEX[b >> 4]}${HEX[b & 15]}`;
    else out += String.fromCharCode(b);
  }
  return out;
}

/**
 * The path, params and query of a URL as robots rules see it (always starts with `/`, no fragment). Accepts
 * absolute URLs, scheme-less `host/path`, and bare paths, the way Google's GetPathParamsQuery does.
 */
export function robotsPathOf(url: string): string {
  let start = 0;
  if (url.length >= 2 && url[0] === '/' && url[1] === '/') start = 2;
  const firstOf = (chars: string, from: number): number => {
    for (let i = from; i < url.length; i++) if (chars.includes(url[i] as string)) return i;
    return -1;
  };
  const earlyPath = firstOf('/?;', start);
  let protocolEnd = url.indexOf('://', start);
  if (earlyPath >= 0 && (protocolEnd < 0 || earlyPath < protocolEnd)) protocolEnd = -1;
  protocolEnd = protocolEnd < 0 ? start : protocolEnd + 3;
  const pathStart = firstOf('/?;', protocolEnd);
  if (pathStart < 0) return '/';
  const hash = url.indexOf('#', start);
  if (hash >= 0 && hash < pathStart) return '/';
  const path = url.slice(pathStart, hash < 0 ? url.length : hash);
  return path.startsWith('/') ? path : `/${path}`;
}

const ASCII_WS = new Set([0x20, 0x09, 0x0a, 0x0b, 0x0c, 0x0d]);

function stripBytes(b: Uint8Array, from: number, to: number): [number, number] {
  while (from < to && ASCII_WS.has(b[from] as number)) from++;
  while (to > from && ASCII_WS.has(b[to - 1] as number)) to--;
  return [from, to];
}

const startsWithCI = (s: string, prefix: string): boolean => s.slice(0, prefix.length).toLowerCase() === prefix;

function keyType(key: string): RobotsLine['type'] {
  if (startsWithCI(key, 'user-agent') || startsWithCI(key, 'useragent') || startsWithCI(key, 'user agent')) return 'user-agent';
  if (startsWithCI(key, 'allow')) return 'allow';
  if (['disallow', 'dissallow', 'dissalow', 'disalow', 'diasllow', 'disallaw'].some((p) => startsWithCI(key, p))) return 'disallow';
  if (startsWithCI(key, 'sitemap') || startsWithCI(key, 'site-map')) return 'sitemap';
  return 'unknown';
}

const latin1 = (b: Uint8Array, from: number, to: number): string =>
  Buffer.from(b.buffer, b.byteOffset + from, to - from).toString('latin1');

/** Parses one line's bytes into a directive, or null when it is not `key: value` (or `key value`). */
function parseLine(b: Uint8Array, lineNo: number): RobotsLine | null {
  let end = b.indexOf(0x23); // '#' starts a comment
  if (end < 0) end = b.length;
  const [s, e] = stripBytes(b, 0, end);
  if (s >= e) return null;
  let sep = -1;
  for (let i = s; i < e; i++)
    if (b[i] === 0x3a) {
      sep = i;
      break;
    }
  if (sep < 0) {
    // Tolerated: whitespace instead of the colon, when the line is exactly two words.
    for (let i = s; i < e; i++)
      if (b[i] === 0x20 || b[i] === 0x09) {
        sep = i;
        break;
      }
    if (sep < 0) return null;
    let v = sep;
    while (v < e && (b[v] === 0x20 || b[v] === 0x09)) v++;
    for (let i = v; i < e; i++) if (b[i] === 0x20 || b[i] === 0x09) return null;
  }
  const [ks, ke] = stripBytes(b, s, sep);
  if (ks >= ke) return null;
  const [vs, ve] = stripBytes(b, sep + 1, e);
  const key = latin1(b, ks, ke);
  const type = keyType(key);
  const raw = b.subarray(vs, ve);
  switch (type) {
    case 'user-agent':
    case 'sitemap':
      return { type, line: lineNo, value: Buffer.from(raw).toString('utf8') };
    case 'allow':
    case 'disallow':
      return { type, line: lineNo, value: escapePattern(raw) };
    default:
      return { type: 'unknown', line: lineNo, key, value: escapePattern(raw) };
  }
}

/**
 * Parses robots.txt text or bytes (bytes keep non-UTF-8 content exact). Only the first {@link ROBOTS_PARSE_LIMIT}
 * bytes are read. Never throws: anything unparsable is skipped.
 */
export function parseRobots(input: string | Uint8Array): RobotsTxt {
  let bytes = typeof input === 'string' ? Buffer.from(input, 'utf8') : input;
  const truncated = bytes.length > ROBOTS_PARSE_LIMIT;
  if (truncated) bytes = bytes.subarray(0, ROBOTS_PARSE_LIMIT);
  const BOM = [0xef, 0xbb, 0xbf];
  const lines: RobotsLine[] = [];
  let lineNo = 0;
  let valid = 0;
  let unknown = 0;
  let last = 0;
  const buf = new Uint8Array(MAX_LINE_LEN);
  let len = 0;
  let bomPos = 0;
  let lastWasCR = false;
  const emit = () => {
    lineNo++;
    const l = parseLine(buf.subarray(0, len), lineNo);
    if (l) {
      lines.push(l);
      if (l.type === 'unknown') unknown++;
      else valid++;
      last = lineNo;
    }
  };
  for (let i = 0; i < bytes.length; i++) {
    const ch = bytes[i] as number;
    // A (possibly partial) UTF-8 BOM at the very start is skipped.
    if (bomPos < 3 && ch === BOM[bomPos++]) continue;
    bomPos = 3;
    if (ch !== 0x0a && ch !== 0x0d) {
      if (len < MAX_LINE_LEN - 1) buf[len++] = ch;
    } else {
      const crlfContinuation = len === 0 && lastWasCR && ch === 0x0a;
      if (!crlfContinuation) emit();
      len = 0;
      lastWasCR = ch === 0x0d;
    }
  }
  emit();
  return { lines, validDirectives: valid, unknownDirectives: unknown, lastDirectiveLine: last, lineCount: lineNo, truncated };
}

/** Google's pattern matcher: anchored at the start, `*` any run, `$` at the very end anchors the end. Linear-ish. */
export function robotsPatternMatches(path: string, pattern: string): boolean {
  const n = path.length;
  let pos: number[] = [0];
  for (let p = 0; p < pattern.length; p++) {
    const c = pattern[p];
    if (c === '$' && p + 1 === pattern.length) return pos[pos.length - 1] === n;
    if (c === '*') {
      const from = pos[0] as number;
      pos = [];
      for (let i = from; i <= n; i++) pos.push(i);
    } else {
      const next: number[] = [];
      for (const i of pos) if (i < n && path[i] === c) next.push(i + 1);
      if (next.length === 0) return false;
      pos = next;
    }
  }
  return true;
}

/** The product token at the start of a user-agent value: letters, `-` and `_` only. */
const extractAgent = (ua: string): string => /^[A-Za-z_-]*/.exec(ua)?.[0] ?? '';

/** Whether `token` is a valid product token to obey (RFC 9309 §2.2.1: letters, `-`, `_`; non-empty). */
export function isValidUserAgentToken(token: string): boolean {
  return token.length > 0 && extractAgent(token) === token;
}

/** A rule as it applies to one crawler, with the group it came from. */
export interface AppliedRule {
  readonly type: 'allow' | 'disallow';
  readonly pattern: string;
  readonly line: number;
}

/** The rules that apply to one token: its own groups, or the `*` groups when none names it. */
export interface TokenRules {
  readonly group: 'specific' | 'global' | 'none';
  readonly rules: readonly AppliedRule[];
  /** Crawl-delay values (seconds) in the applying groups, in order. */
  readonly crawlDelays: readonly number[];
}

const tokenRulesCache = new WeakMap<RobotsTxt, Map<string, TokenRules>>();

/**
 * Collects the rules that apply to `token`, replaying the file the way the reference matcher does: consecutive
 * user-agent lines form one group; a rule line closes the run of user-agent lines; sitemap and unknown lines do
 * not. A group naming both `*` and the token counts as the token's.
 */
export function rulesFor(robots: RobotsTxt, token: string): TokenRules {
  let perFile = tokenRulesCache.get(robots);
  if (!perFile) tokenRulesCache.set(robots, (perFile = new Map()));
  const key = token.toLowerCase();
  const cached = perFile.get(key);
  if (cached) return cached;
  const specific: AppliedRule[] = [];
  const global: AppliedRule[] = [];
  const specificDelays: number[] = [];
  const globalDelays: number[] = [];
  let seenGlobal = false;
  let seenSpecific = false;
  let everSpecific = false;
  let seenSeparator = false;
  for (const l of robots.lines) {
    if (l.type === 'user-agent') {
      if (seenSeparator) seenSpecific = seenGlobal = seenSeparator = false;
      const v = l.value;
      if (v.length >= 1 && v[0] === '*' && (v.length === 1 || /\s/.test(v[1] as string))) seenGlobal = true;
      else if (key !== '' && extractAgent(v).toLowerCase() === key) everSpecific = seenSpecific = true;
    } else if (l.type === 'allow' || l.type === 'disallow') {
      if (!seenGlobal && !seenSpecific) continue;
      seenSeparator = true;
      (seenSpecific ? specific : global).push({ type: l.type, pattern: l.value, line: l.line });
    } else if (l.type === 'unknown' && l.key.toLowerCase() === 'crawl-delay' && (seenGlobal || seenSpecific)) {
      const d = Number(l.value);
      if (Number.isFinite(d) && d >= 0) (seenSpecific ? specificDelays : globalDelays).push(d);
    }
  }
  const out: TokenRules = everSpecific
    ? { group: 'specific', rules: specific, crawlDelays: specificDelays }
    : seenGlobalEver(robots)
      ? { group: 'global', rules: global, crawlDelays: globalDelays }
      : { group: 'none', rules: [], crawlDelays: [] };
  perFile.set(key, out);
  return out;
}

const seenGlobalEver = (robots: RobotsTxt): boolean =>
  robots.lines.some((l) => l.type === 'user-agent' && l.value[0] === '*' && (l.value.length === 1 || /\s/.test(l.value[1] as string)));

/** Result of a match: whether allowed, and the winning rule as `Allow: /x` / `Disallow: /y` (null if none). */
export interface RobotsDecision {
  readonly allowed: boolean;
  readonly rule: string | null;
}

/** Best match priority of a rule against a path (pattern length, -1 for no match), with the index.htm tolerance. */
function matchPriority(r: AppliedRule, path: string): { priority: number; pattern: string } {
  if (robotsPatternMatches(path, r.pattern)) return { priority: r.pattern.length, pattern: r.pattern };
  if (r.type === 'allow') {
    // Google: an allow rule for …/index.htm(l) also allows the directory itself.
    const slash = r.pattern.lastIndexOf('/');
    if (slash >= 0 && r.pattern.slice(slash).startsWith('/index.htm')) {
      const alt = `${r.pattern.slice(0, slash + 1)}$`;
      if (robotsPatternMatches(path, alt)) return { priority: alt.length, pattern: alt };
    }
  }
  return { priority: -1, pattern: r.pattern };
}

/**
 * Whether `token` may fetch `pathAndQuery` (or a whole URL; its path and query are taken). The path must already
 * be percent-encoded, as URLs on the wire are. `/robots.txt` is always allowed.
 */
export function robotsAllows(robots: RobotsTxt, token: string, pathAndQuery: string): RobotsDecision {
  // A path (even one starting with `//`) is taken as is; anything else is treated as a URL.
  const path = pathAndQuery.startsWith('/') ? pathAndQuery.replace(/#.*$/s, '') : robotsPathOf(pathAndQuery);
  if (path === '/robots.txt') return { allowed: true, rule: null };
  const { rules } = rulesFor(robots, token);
  let allow = { priority: -1, rule: null as string | null };
  let disallow = { priority: -1, rule: null as string | null };
  for (const r of rules) {
    const m = matchPriority(r, path);
    if (m.priority < 0) continue;
    const best = r.type === 'allow' ? allow : disallow;
    if (m.priority > best.priority) {
      const v = { priority: m.priority, rule: `${r.type === 'allow' ? 'Allow' : 'Disallow'}: ${m.pattern}` };
      if (r.type === 'allow') allow = v;
      else disallow = v;
    }
  }
  // Priority 0 (an empty pattern) matches but decides nothing.
  if (allow.priority > 0 || disallow.priority > 0) {
    if (disallow.priority > allow.priority) return { allowed: false, rule: disallow.rule };
    return { allowed: true, rule: allow.rule };
  }
  return { allowed: true, rule: null };
}

/** The Crawl-delay (seconds) of the groups that apply to `token` (the largest, if several), or null. */
export function crawlDelay(robots: RobotsTxt, token: string): number | null {
  const d = rulesFor(robots, token).crawlDelays;
  return d.length === 0 ? null : Math.max(...d);
}

/** Every Sitemap URL in the file, in order, whatever group it sits in. */
export function sitemaps(robots: RobotsTxt): string[] {
  return robots.lines.filter((l) => l.type === 'sitemap' && l.value !== '').map((l) => l.value);
}

/* ------------------------------------------------------------------------------------------------------------ */

/** How the robots.txt of an origin was obtained. */
export type RobotsStatus = 'ok' | 'not_found' | 'error_disallow_all' | 'unreachable';

/** The answer of {@link RobotsCache.check}. */
export interface RobotsCheck {
  readonly allowed: boolean;
  readonly rule: string | null;
  readonly crawlDelaySec: number | null;
  readonly status: RobotsStatus;
}

/** What we know about one origin's robots.txt (the site-evidence tool shows it). */
export interface RobotsInfo {
  readonly origin: string;
  readonly status: RobotsStatus;
  /** ms since epoch. */
  readonly fetchedAt: number;
  readonly expiresAt: number;
  /** HTTP status of the last fetch, null when unreachable. */
  readonly httpStatus: number | null;
  /** Final URL after redirects. */
  readonly url: string;
  readonly group: TokenRules['group'];
  /** Rules that apply to SvcBot, as `Allow: /x` / `Disallow: /y`. */
  readonly rules: readonly string[];
  readonly crawlDelaySec: number | null;
  readonly sitemaps: readonly string[];
  /** Why it is unreachable (fetch error kind), if it is. */
  readonly error: string | null;
  readonly truncated: boolean;
}

/** Options of {@link RobotsCache}. */
export interface RobotsCacheOptions {
  readonly fetcher: Fetcher;
  /** How long a fetched robots.txt is used. Capped at 24 h (RFC 9309 §2.4). @default 24 h */
  readonly ttlMs?: number;
  /** How long a 5xx/unreachable result is kept before trying again. @default 10 min (≤ ttlMs) */
  readonly errorTtlMs?: number;
  /** Clock, for tests. @default Date.now */
  readonly now?: () => number;
  /** Product token. @default 'SvcBot' */
  readonly token?: string;
  /** The fleet's copy of every origin's file: one fetch per validity period for all workers sharing it. */
  readonly shared?: RobotsRepo;
  /** Names this worker's fetch leases in `shared`. @default robots-<pid>-<random> */
  readonly leaseToken?: string;
  /** How long a fetch lease holds: a killed worker delays the origin's other workers that long. @default 60 s */
  readonly leaseMs?: number;
  /** How often a worker waiting for another's fetch looks for its result. @default 200 ms */
  readonly pollMs?: number;
  /** A failure of the shared store: the worker then fetches and keeps the file for itself. */
  readonly onSharedError?: (err: unknown) => void;
}

interface CacheEntry {
  readonly info: RobotsInfo;
  readonly robots: RobotsTxt | null;
  /** The file the rules were parsed from, kept to hand on to the fleet. */
  readonly body: Uint8Array | null;
}

const DAY_MS = 24 * 3600 * 1000;

/** Fetch errors that come from the worker's own settings (its address policy), not from the site. */
const WORKER_REFUSALS: ReadonlySet<string> = new Set(['blocked_address', 'bad_scheme', 'credentials']);

/**
 * Fetches, caches and applies robots.txt per origin (RFC 9309 §2.3–2.4): 2xx parse; 4xx allow all (429 as 5xx);
 * 5xx, over 5 redirects or a network error disallow all, unless an earlier good copy exists. One fetch per origin
 * for concurrent checks, and with a shared store one per validity period for the whole fleet: the worker holding
 * the origin's lease fetches, the others wait for its row (or take over when the lease lapses).
 */
export class RobotsCache {
  private readonly fetcher: Fetcher;
  private readonly ttlMs: number;
  private readonly errorTtlMs: number;
  private readonly now: () => number;
  private readonly token: string;
  private readonly shared: RobotsRepo | null;
  private readonly leaseToken: string;
  private readonly leaseMs: number;
  private readonly pollMs: number;
  private readonly onSharedError: (err: unknown) => void;
  private readonly entries = new Map<string, CacheEntry>();
  private readonly inflight = new Map<string, Promise<CacheEntry>>();

  constructor(opts: RobotsCacheOptions) {
    this.fetcher = opts.fetcher;
    this.ttlMs = Math.min(opts.ttlMs ?? DAY_MS, DAY_MS);
    this.errorTtlMs = Math.min(opts.errorTtlMs ?? 10 * 60 * 1000, this.ttlMs);
    this.now = opts.now ?? Date.now;
    this.token = opts.token ?? USER_AGENT_TOKEN;
    this.shared = opts.shared ?? null;
    this.leaseToken = opts.leaseToken ?? `robots-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
    this.leaseMs = opts.leaseMs ?? 60_000;
    this.pollMs = opts.pollMs ?? 200;
    this.onSharedError = opts.onSharedError ?? (() => undefined);
  }

  /** Whether the crawler may fetch `url`, fetching the origin's robots.txt first if needed. */
  async check(url: string): Promise<RobotsCheck> {
    const u = new URL(url);
    const entry = await this.entry(u.origin);
    const path = `${u.pathname}${u.search}`;
    if (!entry.robots) {
      // not_found: allow all; 5xx/unreachable: disallow all (robots.txt itself stays fetchable).
      const allowed = entry.info.status === 'not_found' || u.pathname === '/robots.txt';
      return { allowed, rule: allowed ? null : 'Disallow: / (robots.txt unavailable)', crawlDelaySec: null, status: entry.info.status };
    }
    const d = robotsAllows(entry.robots, this.token, path);
    return { allowed: d.allowed, rule: d.rule, crawlDelaySec: crawlDelay(entry.robots, this.token), status: entry.info.status };
  }

  /** What is cached for an origin (`scheme://host[:port]`), fetching it if absent or stale. */
  async info(origin: string): Promise<RobotsInfo> {
    return (await this.entry(new URL(origin).origin)).info;
  }

  /** The cached info without fetching, or null. */
  peek(origin: string): RobotsInfo | null {
    return this.entries.get(new URL(origin).origin)?.info ?? null;
  }

  /** Forgets an origin (e.g. after a webmaster asks for a recrawl), in the fleet's copy too. */
  async invalidate(origin: string): Promise<void> {
    const o = new URL(origin).origin;
    this.entries.delete(o);
    await this.shared?.forget(o).catch(this.onSharedError);
  }

  private async entry(origin: string): Promise<CacheEntry> {
    const cur = this.entries.get(origin);
    if (cur && cur.info.expiresAt > this.now()) return cur;
    let p = this.inflight.get(origin);
    if (!p) {
      p = this.load(origin, cur).finally(() => this.inflight.delete(origin));
      this.inflight.set(origin, p);
    }
    return p;
  }

  private async load(origin: string, previous: CacheEntry | undefined): Promise<CacheEntry> {
    const entry = this.shared ? await this.loadShared(this.shared, origin, previous) : await this.fetchEntry(origin, previous);
    this.entries.set(origin, entry);
    return entry;
  }

  /**
   * The fleet's fresh copy, else this worker's own fetch under the origin's lease, else a wait for the holder's row.
   * A dead holder's lease lapses and a waiter takes it over; the wait is also bounded in real time (twice the lease,
   * whatever the injected clock says), so no worker waits for ever on a store whose leases never lapse.
   */
  private async loadShared(shared: RobotsRepo, origin: string, previous: CacheEntry | undefined): Promise<CacheEntry> {
    const waitUntil = performance.now() + 2 * this.leaseMs;
    let last: SharedRobots | null = null;
    try {
      for (;;) {
        last = await shared.get(origin);
        const now = this.now();
        if (last && last.expiresAt > now) return this.entryOf(last);
        if (performance.now() >= waitUntil || (await shared.lease(origin, this.leaseToken, this.leaseMs, now))) break;
        await sleep(this.pollMs);
      }
    } catch (err) {
      this.onSharedError(err);
      return this.fetchEntry(origin, previous);
    }
    const entry = await this.fetchEntry(origin, previous ?? (last ? this.entryOf(last) : undefined));
    if (entry.info.error !== null && WORKER_REFUSALS.has(entry.info.error)) {
      // This worker's own address policy refused the fetch: the rest of the fleet may be allowed to make it.
      await shared.release(origin, this.leaseToken).catch(this.onSharedError);
      return entry;
    }
    await shared
      .put({
        origin,
        status: entry.info.status,
        fetchedAt: entry.info.fetchedAt,
        expiresAt: entry.info.expiresAt,
        httpStatus: entry.info.httpStatus,
        url: entry.info.url,
        error: entry.info.error,
        truncated: entry.info.truncated,
        body: entry.robots ? entry.body : null,
      })
      .catch(this.onSharedError);
    return entry;
  }

  /** A fleet row as this worker's entry: the same derivation `fetchEntry` makes from a response. */
  private entryOf(row: SharedRobots): CacheEntry {
    const base = { origin: row.origin, fetchedAt: row.fetchedAt, expiresAt: row.expiresAt, url: row.url, error: row.error };
    const status = row.status as RobotsStatus;
    if (status === 'ok' && row.body) {
      const robots = parseRobots(row.body);
      return { robots, body: row.body, info: this.okInfo(base, row.httpStatus, robots, row.truncated) };
    }
    return { robots: null, body: null, info: emptyInfo({ ...base, httpStatus: row.httpStatus }, status === 'ok' ? 'unreachable' : status) };
  }

  private okInfo(
    base: Pick<RobotsInfo, 'origin' | 'fetchedAt' | 'expiresAt' | 'url' | 'error'>,
    httpStatus: number | null,
    robots: RobotsTxt,
    truncated: boolean,
  ): RobotsInfo {
    const tr = rulesFor(robots, this.token);
    return {
      ...base,
      httpStatus,
      status: 'ok',
      group: tr.group,
      rules: tr.rules.map((r) => `${r.type === 'allow' ? 'Allow' : 'Disallow'}: ${r.pattern}`),
      crawlDelaySec: crawlDelay(robots, this.token),
      sitemaps: sitemaps(robots),
      truncated: truncated || robots.truncated,
    };
  }

  private async fetchEntry(origin: string, previous: CacheEntry | undefined): Promise<CacheEntry> {
    const url = `${origin}/robots.txt`;
    const fetchedAt = this.now();
    let res: FetchResult | null = null;
    let error: string | null = null;
    try {
      res = await this.fetcher.fetch(url, { maxBytes: ROBOTS_PARSE_LIMIT, truncate: true, headers: { accept: 'text/plain,*/*;q=0.5' } });
    } catch (err) {
      if (!isFetchError(err)) throw err;
      error = err.kind;
    }
    const base = { origin, fetchedAt, url: res?.url ?? url, error, httpStatus: res?.status ?? null };
    if (res && res.status >= 200 && res.status < 300) {
      const robots = parseRobots(res.body);
      const body = new Uint8Array(res.body.buffer, res.body.byteOffset, res.body.byteLength);
      return { robots, body, info: this.okInfo({ ...base, expiresAt: fetchedAt + this.ttlMs }, base.httpStatus, robots, res.truncated) };
    }
    if (res && res.status >= 400 && res.status < 500 && res.status !== 429) {
      return { robots: null, body: null, info: emptyInfo({ ...base, expiresAt: fetchedAt + this.ttlMs }, 'not_found') };
    }
    // 5xx, 429, an unfollowed 3xx (too many hops) or no answer: assume complete disallow.
    if (previous?.robots) {
      // §2.4: a previously fetched copy may be used while the file is unreachable.
      return { ...previous, info: { ...previous.info, expiresAt: fetchedAt + this.errorTtlMs } };
    }
    return {
      robots: null,
      body: null,
      info: emptyInfo({ ...base, expiresAt: fetchedAt + this.errorTtlMs }, res ? 'error_disallow_all' : 'unreachable'),
    };
  }
}

/** The info of an origin whose file gives no rules (absent, or unavailable and so disallowing all). */
function emptyInfo(
  base: Pick<RobotsInfo, 'origin' | 'fetchedAt' | 'expiresAt' | 'url' | 'error' | 'httpStatus'>,
  status: RobotsStatus,
): RobotsInfo {
  return { ...base, status, group: 'none', rules: [], crawlDelaySec: null, sitemaps: [], truncated: false };
}
