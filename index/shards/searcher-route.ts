/**
 * A searcher's internal route (`svc serve --role searcher`): `POST /internal/v1/shard/<i>/<call>` answers one
 * `ShardSource` call (shard-wire.ts) for a shard this process holds. Only a caller holding the fleet secret
 * (SVC_FLEET_SECRET, `Authorization: Bearer <secret>`, compared in constant time) is answered; without a configured
 * secret the route is not mounted at all (404), so an API key can never reach it. Bodies are bounded.
 */
import type Router from '@koa/router';
import { readBody } from '../../rest/body.js';
import type { PassageIndex } from '../engines/lance/store.js';
import { answerShardCall, decodeWire, encodeWire, fleetSecretMatches, SHARD_ROUTE, ShardCallError } from './shard-wire.js';

/** Largest call body read (bytes): a call carries a query, a vector or a few hundred passage keys. */
export const SHARD_BODY_LIMIT = 4 * 2 ** 20;

/** An error the app's funnel answers with this HTTP status (rest/app.ts maps it to its problem code). */
const httpError = (status: number, message: string): Error => Object.assign(new Error(message), { status, expose: true });

/** Mounts the route for `shards` (by shard index) when `secret` is set. */
export function mountShardRoute(
  router: Router,
  o: { readonly shards: ReadonlyMap<number, PassageIndex>; readonly secret: string | undefined; readonly bodyLimit?: number },
): void {
  const secret = o.secret;
  if (secret === undefined) return;
  router.post(`${SHARD_ROUTE}/:shard/:call`, async (ctx) => {
    const auth = ctx.get('authorization');
    const given = auth.startsWith('Bearer ') ? auth.slice('Bearer '.length) : '';
    if (!fleetSecretMatches(given, secret)) throw httpError(401, 'the fleet secret is required');
    const shard = o.shards.get(Number(ctx.params.shard));
    if (!shard || !/^\d+$/.test(ctx.params.shard ?? '')) throw httpError(404, 'this searcher does not serve that shard');
    // Over the bound: rest/body.ts's payload_too_large (413), as on every other route.
    const body = (await readBody(ctx.req, o.bodyLimit ?? SHARD_BODY_LIMIT)).toString('utf8');
    let args: unknown;
    try {
      args = decodeWire(body || '{}');
    } catch {
      throw httpError(400, 'the body is not a wire value');
    }
    try {
      const answer = await answerShardCall(shard, ctx.params.call ?? '', args);
      ctx.type = 'application/json';
      ctx.body = encodeWire(answer);
    } catch (err) {
      if (err instanceof ShardCallError) throw httpError(400, err.message);
      throw err;
    }
  });
}
