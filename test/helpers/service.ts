import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { loadConfig, type Config, type ConfigInput } from '../../config.js';
import type { LookupFn } from '../../crawler/resolver.js';
import { createLogger } from '../../logger.js';
import { createServices, startServer, type RunningServer, type ServerTimeouts, type Services, type ServiceOptions } from '../../main.js';

export interface TestService {
  readonly url: string;
  readonly services: Services;
  readonly config: Config;
  readonly dataDir: string;
  /** A fresh active key (60/min, 10000/day unless overridden). */
  readonly key: string;
  readonly keyId: string;
  /** Every log line written so far (JSON strings). */
  readonly logLines: string[];
  readonly running: RunningServer;
  close(): Promise<void>;
}

/** The flags every test service starts from: its data dir, loopback on an ephemeral port, no crawl, info logs. */
export function loopbackFlags(dataDir: string): Partial<ConfigInput> {
  return { dataDir, host: '127.0.0.1', port: 0, crawl: false, logLevel: 'info' };
}

/** A log destination that keeps every line written (JSON strings), for tests to read. */
export function captureLog(): { lines: string[]; destination: Writable } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(
        ...chunk
          .toString('utf8')
          .split('\n')
          .filter((l) => l.length > 0),
      );
      cb();
    },
  });
  return { lines, destination };
}

/**
 * A whole service on loopback in a temp data dir, with a captured log. Tests own the returned handle and close it
 * (use `t.teardown(s.close)`).
 */
export async function startTestService(
  opts: { config?: Partial<ConfigInput>; perMinute?: number; perDay?: number; timeouts?: ServerTimeouts } & Omit<
    ServiceOptions,
    'log'
  > = {},
): Promise<TestService> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-test-'));
  const config = loadConfig({
    env: {},
    flags: {
      ...loopbackFlags(dataDir),
      // Searches on the HTTP thread unless a test asks for search threads (test/tools/search-pool.test.ts).
      searchThreads: 0,
      ...opts.config,
    },
  });
  const { lines: logLines, destination } = captureLog();
  const log = createLogger({ level: 'debug', destination });
  // No test sends a DNS query: names resolve through `opts.lookup` (a table) or not at all.
  const offline: LookupFn = async (host) => {
    throw Object.assign(new Error(`offline test: no DNS for ${host}`), { code: 'ENOTFOUND' });
  };
  const services = await createServices(config, { lookup: offline, ...opts, log });
  const { record, key } = await services.keys.create({ name: 'test', perMinute: opts.perMinute ?? 60, perDay: opts.perDay ?? 10_000 });
  const running = await startServer(services, opts.timeouts);
  let closed = false;
  return {
    url: running.url,
    services,
    config,
    dataDir,
    key,
    keyId: record.id,
    logLines,
    running,
    close: async () => {
      if (closed) return;
      closed = true;
      await running.close();
      await services.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** fetch against the test service with the key (or a given Authorization value, or none with `auth: null`). */
export async function api(
  s: TestService,
  path: string,
  init: RequestInit & { auth?: string | null; json?: unknown } = {},
): Promise<{ status: number; headers: Headers; body: unknown; text: string }> {
  const headers = new Headers(init.headers);
  if (init.auth !== null) headers.set('authorization', init.auth ?? `Bearer ${s.key}`);
  let body = init.body;
  if (init.json !== undefined) {
    headers.set('content-type', 'application/json');
    body = JSON.stringify(init.json);
  }
  const res = await fetch(s.url + path, { ...init, headers, body });
  const text = await res.text();
  let parsed: unknown = undefined;
  try {
    parsed = text.length > 0 ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}
