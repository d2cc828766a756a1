/**
 * A searcher's internal route (`svc serve --role searcher`): `POST /internal/v1/shard/<i>/<call>` answers one
 * `ShardSource` call (shard-wire.ts) for a shard this process holds. Only a caller holding the fleet secret
 * (SVC_FLEET_SECRET, `Authorization: Bearer <secret>`, compared in constant time) is answered; without a configured
 * secret the route is not mounted at all (404), so an API key can never reach it. Bodies are bounded.
 *
 * The route is mounted twice over one answer (`shardCallAnswer`): on the app's router (`mountShardRoute`), and as a
 * plain request handler the server runs before the app's middleware (`shardPlainRoute`, rest/app.ts `PlainRoute`).
 * Every query makes a few of these calls to each searcher, so their fixed cost is a query's: the plain handler takes
 * only a well-formed call with the secret to a shard served here, and leaves every other request (a wrong secret,
 * another method or shard) to the app, which answers it as it always did.
 */
import type { IncomingMessage } from 'node:http';
import type Router from '@koa/router';
import { readBody } from '../../rest/body.js';
import type { PassageIndex } from '../engines/lance/store.js';
import { answerShardCall, decodeWire, encodeWire, fleetSecretMatches, SHARD_ROUTE, ShardCallError } from './shard-wire.js';

/** Largest call body read (bytes): a call carries a query, a vector or a few hundred passage keys. */
export const SHARD_BODY_LIMIT = 4 * 2 ** 20;

/** An error the app's funnel answers with this HTTP status (rest/app.ts maps it to its problem code). */
const httpError = (status: number, message: string): Error => Object.assign(new Error(message), { status, expose: true });

/** What the route serves. */
export interface ShardRouteOptions {
  readonly shards: ReadonlyMap<number, PassageIndex>;
  readonly secret: string | undefined;
  readonly bodyLimit?: number;
}

const bearer = (auth: string | undefined): string => (auth?.startsWith('Bearer ') ? auth.slice('Bearer '.length) : '');

/** Reads the call's body and answers it (its wire text); throws what the app's funnel answers (400, 413, 500). */
async function shardCallAnswer(shard: PassageIndex, call: string, req: IncomingMessage, bodyLimit: number): Promise<string> {
  // Over the bound: rest/body.ts's payload_too_large (413), as on every other route.
  const body = (await readBody(req, bodyLimit)).toString('utf8');
  let args: unknown;
  try {
    args = decodeWire(body || '{}');
  } catch {
    throw httpError(400, 'the body is not a wire value');
  }
  try {
    return encodeWire(await answerShardCall(shard, call, args));
  } catch (err) {
    if (err instanceof ShardCallError) throw httpError(400, err.message);
    throw err;
  }
}

/** Mounts the route for `shards` (by shard index) when `secret` is set. */
export function mountShardRoute(router: Router, o: ShardRouteOptions): void {
  const secret = o.secret;
  if (secret === undefined) return;
  router.post(`${SHARD_ROUTE}/:shard/:call`, async (ctx) => {
    if (!fleetSecretMatches(bearer(ctx.get('authorization')), secret)) throw httpError(401, 'the fleet secret is required');
    const shard = o.shards.get(Number(ctx.params.shard));
    if (!shard || !/^\d+$/.test(ctx.params.shard ?? '')) throw httpError(404, 'this searcher does not serve that shard');
    const answer = await shardCallAnswer(shard, ctx.params.call ?? '', ctx.req, o.bodyLimit ?? SHARD_BODY_LIMIT);
    ctx.type = 'application/json';
    ctx.body = answer;
  });
}

/** A call as the plain handler takes it: the path of one call, nothing more (no query, no escapes). */
const CALL_PATH = new RegExp(`^${SHARD_ROUTE}/(\\d{1,6})/([A-Za-z]{1,40})$`);

/**
 * The route as a plain handler (rest/app.ts `PlainRoute`), or null when no secret is set. `take` answers null for any
 * request but a POST of a call with the fleet secret to a shard served here: the app's route answers those.
 */
export function shardPlainRoute(o: ShardRouteOptions): {
  readonly pattern: string;
  take(req: IncomingMessage): (() => Promise<{ type: string; body: string }>) | null;
} | null {
  const secret = o.secret;
  if (secret === undefined) return null;
  const limit = o.bodyLimit ?? SHARD_BODY_LIMIT;
  return {
    // The pattern the app's router reports for the same route (the request log and metrics label).
    pattern: `${SHARD_ROUTE}/:shard/:call`,
    take(req) {
      if (req.method !== 'POST') return null;
      const m = CALL_PATH.exec(req.url ?? '');
      const shard = m ? o.shards.get(Number(m[1])) : undefined;
      if (!m || !shard || !fleetSecretMatches(bearer(req.headers.authorization), secret)) return null;
      const call = m[2]!;
      return async () => ({ type: 'application/json; charset=utf-8', body: await shardCallAnswer(shard, call, req, limit) });
    },
  };
}
