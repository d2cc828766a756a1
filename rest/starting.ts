import type { IncomingMessage, ServerResponse } from 'node:http';
import { SvcError, toProblem } from '../errors.js';
import { servedHosts } from './served-host.js';

/** What the HTTP server answers while the process is still opening its stores (`svc serve`, before the app). */
export interface StartingOptions {
  readonly bindHost: string;
  readonly allowedHosts: readonly string[];
  readonly allowedOrigins: readonly string[];
  /** What this process runs (`svc serve --role`). */
  readonly role: string;
  /** The step the start is on: `state database`, `embedding model`, `index tables`, … */
  readonly waitingFor: () => string;
}

/**
 * The request handler of a process that is starting: `/healthz` answers 200 at once (the process is alive, a
 * supervisor must not restart it while an `api` replica waits for the indexer's tables), `/readyz` 503 with what
 * it is waiting for, every other route 503 problem+json with Retry-After. The Host check is the app's own.
 */
export function startingHandler(o: StartingOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const served = servedHosts({ bindHost: o.bindHost, allowedHosts: o.allowedHosts, allowedOrigins: o.allowedOrigins });
  const send = (res: ServerResponse, status: number, type: string, body: unknown, extra: Record<string, string> = {}): void => {
    res.writeHead(status, {
      'Content-Type': type,
      'Cache-Control': 'no-store',
      'X-Content-Type-Options': 'nosniff',
      ...extra,
    });
    res.end(JSON.stringify(body));
  };
  const problem = (res: ServerResponse, err: SvcError): void =>
    send(res, err.status, 'application/problem+json', toProblem(err), err.retryAfter ? { 'Retry-After': String(err.retryAfter) } : {});
  return (req, res) => {
    // Bodies are not read: the connection closes after the answer rather than carry an unread body into the next request.
    res.shouldKeepAlive = false;
    if (!served.hostAllowed(req.headers.host ?? '')) {
      problem(res, new SvcError('forbidden_host', 'this Host header does not name this service'));
      return;
    }
    const path = (req.url ?? '/').split('?')[0];
    const head = req.method === 'GET' || req.method === 'HEAD';
    if (head && path === '/healthz') send(res, 200, 'application/json; charset=utf-8', { status: 'ok' });
    else if (head && path === '/readyz')
      send(res, 503, 'application/json; charset=utf-8', { status: 'starting', waiting_for: o.waitingFor(), checks: { role: o.role } });
    else problem(res, new SvcError('unavailable', `svc is starting (waiting for ${o.waitingFor()}); retry shortly`, { retryAfter: 5 }));
  };
}
