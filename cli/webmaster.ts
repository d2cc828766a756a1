/**
 * `svc webmaster …`: the operator's handle on the webmaster foundation (planned, NOT exposed — there is no
 * route, tool or page for any of it). For testing and support: the operator passes the owner's authenticated OIDC
 * identity (--issuer, --subject) as an identity provider asserted it. Output is one JSON object per command.
 * A proof's challenge is printed once, by `proof issue` / `proof rotate`, and never stored or logged.
 */
import { parseArgs } from 'node:util';
import { loadConfig, type Config } from '../config.js';
import { createResolver } from '../crawler/resolver.js';
import { indexLocation } from '../index/engines/lance/location.js';
import { openIndex } from '../index/shards/sharded-index.js';
import { openRepositories, stateOptions } from '../state/repos/open.js';
import type { Repositories } from '../state/repos/types.js';
import { PROOF_METHODS, PROPERTY_KINDS, type ProofMethod, type PropertyKind } from '../state/repos/webmaster-types.js';
import { IdentityError, type OidcIdentity } from '../webmaster/accounts.js';
import { createProofCheckers, createTxtLookup, DNS_TXT_LABEL, META_NAME, TXT_PREFIX, WELL_KNOWN_PATH } from '../webmaster/checkers.js';
import { propertyDiagnostics } from '../webmaster/diagnostics.js';
import { FastLane } from '../webmaster/fast-lane.js';
import { Ownership, OwnershipError, reverifyPeriodically } from '../webmaster/ownership.js';
import { PropertyNameError } from '../webmaster/properties.js';
import { UsageError, type CliIo } from './io.js';

/** Where the owner publishes a challenge, without repeating it (it is printed exactly once, as `challenge`). */
function publishHint(method: ProofMethod, name: string): string {
  if (method === 'dns_txt') return `a TXT record at ${DNS_TXT_LABEL}.${name} whose value is ${TXT_PREFIX} followed by the challenge`;
  if (method === 'meta_tag') return `<meta name="${META_NAME}" content="(the challenge)"> in the home page of ${name}`;
  return `the challenge on a line of its own in ${name}${WELL_KNOWN_PATH}`;
}

const need = (v: string | undefined, flag: string): string => {
  if (v === undefined || v.trim() === '') throw new UsageError(`webmaster: ${flag} is required`);
  return v;
};

function oneOf<T extends string>(v: string | undefined, flag: string, allowed: readonly T[]): T {
  const s = need(v, flag);
  if (!(allowed as readonly string[]).includes(s)) throw new UsageError(`webmaster: ${flag} must be one of ${allowed.join(', ')}`);
  return s as T;
}

/** `svc webmaster <property|proof|status|reverify|audit|diagnostics|submit> …` */
export async function webmasterCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      issuer: { type: 'string' },
      subject: { type: 'string' },
      kind: { type: 'string' },
      name: { type: 'string' },
      property: { type: 'string' },
      method: { type: 'string' },
      proof: { type: 'string' },
      url: { type: 'string' },
      'idempotency-key': { type: 'string' },
      'dns-server': { type: 'string', multiple: true },
      'proof-origin': { type: 'string' },
      resolve: { type: 'string', multiple: true },
      'allow-loopback': { type: 'boolean' },
      every: { type: 'string' },
      'data-dir': { type: 'string' },
    },
  });
  const config = loadConfig({
    env: io.env,
    flags: { dataDir: values['data-dir'], resolve: values.resolve, crawlAllowLoopback: values['allow-loopback'] },
  });
  const [group, action] = positionals;
  const identity = (): OidcIdentity => ({ issuer: need(values.issuer, '--issuer'), subject: need(values.subject, '--subject') });
  const out = (v: unknown) => io.stdout.write(JSON.stringify(v) + '\n');
  const repos = await openRepositories(stateOptions(config));
  try {
    const ownership = ownershipFor(config, repos, values);
    switch (`${group ?? ''} ${action ?? ''}`.trim()) {
      case 'property create': {
        const kind = oneOf<PropertyKind>(values.kind, '--kind', PROPERTY_KINDS);
        const { property, created } = await ownership.createProperty(identity(), kind, need(values.name, '--name'));
        out({ created, property });
        return 0;
      }
      case 'property list':
        out({ properties: await ownership.list(identity()) });
        return 0;
      case 'proof issue':
      case 'proof rotate': {
        const id = need(values.property, '--property');
        const method = oneOf<ProofMethod>(values.method, '--method', PROOF_METHODS);
        const { proof, challenge } =
          action === 'rotate' ? await ownership.rotate(identity(), id, method) : await ownership.issueProof(identity(), id, method);
        const property = await repos.webmaster.getProperty(id);
        out({
          proof: { id: proof.id, method: proof.method, state: proof.state, expires_at: proof.expiresAt },
          challenge,
          publish: publishHint(method, property?.name ?? ''),
          note: 'The challenge is shown this once and is not stored; only its SHA-256 is kept.',
        });
        return 0;
      }
      case 'proof verify': {
        const r = await ownership.verify(
          identity(),
          need(values.property, '--property'),
          oneOf<ProofMethod>(values.method, '--method', PROOF_METHODS),
        );
        out(r);
        return r.outcome === 'ok' ? 0 : 1;
      }
      case 'proof revoke':
        out(await ownership.revoke(identity(), need(values.proof, '--proof')));
        return 0;
      case 'status':
        out(await ownership.status(identity(), need(values.property, '--property')));
        return 0;
      case 'reverify': {
        const every = values.every === undefined ? null : Number(values.every);
        if (every === null) {
          out(await ownership.reverifyAll());
          return 0;
        }
        if (!Number.isInteger(every) || every < 1) throw new UsageError('webmaster: --every takes whole seconds ≥ 1');
        // Periodic mode: one JSON line per pass until SIGINT / SIGTERM (an operator's service or container).
        const stop = new AbortController();
        const onSignal = () => stop.abort();
        process.once('SIGINT', onSignal);
        process.once('SIGTERM', onSignal);
        try {
          await reverifyPeriodically(ownership, {
            everyMs: every * 1000,
            signal: stop.signal,
            onPass: (r) =>
              'error' in r
                ? io.stderr.write(`svc webmaster: re-verification pass failed: ${(r.error as Error).message}\n`)
                : out({ at: new Date().toISOString(), ...r }),
          });
        } finally {
          process.off('SIGINT', onSignal);
          process.off('SIGTERM', onSignal);
        }
        return 0;
      }
      case 'audit':
        out({ audit: await repos.webmaster.auditLog(values.property) });
        return 0;
      case 'diagnostics': {
        const id = need(values.property, '--property');
        await ownership.status(identity(), id); // ownership of the record
        if (!(await ownership.isOwned(id)))
          throw new OwnershipError('not_verified', 'the property is not verified (diagnostics are for verified owners)');
        const property = await repos.webmaster.getProperty(id);
        // The state through the repositories (PostgreSQL with SVC_DATABASE_URL), the index where SVC_INDEX_URI says.
        // Sharded or not: a page is read from the shard that holds it.
        const index = await openIndex({ location: indexLocation(config), embedder: null, textEngine: false, writes: false });
        try {
          out(await propertyDiagnostics({ repos, index }, property!));
        } finally {
          await index.close();
        }
        return 0;
      }
      case 'submit': {
        const lane = new FastLane({ repo: repos.webmaster, frontier: repos.frontier, ownership, perDay: config.webmasterFastLanePerDay });
        const r = await lane.submit(identity(), need(values.property, '--property'), need(values.url, '--url'), values['idempotency-key']);
        out(r);
        return r.frontierId === null ? 1 : 0;
      }
      default:
        throw new UsageError('webmaster: unknown sub-command (svc webmaster --help)');
    }
  } catch (err) {
    if (err instanceof OwnershipError || err instanceof IdentityError || err instanceof PropertyNameError) {
      io.stderr.write(`svc webmaster: ${err.code}: ${err.message}\n`);
      return 1;
    }
    throw err;
  } finally {
    await repos.close();
  }
}

function ownershipFor(config: Config, repos: Repositories, values: { 'dns-server'?: string[]; 'proof-origin'?: string }): Ownership {
  const template = values['proof-origin'];
  const checkers = createProofCheckers({
    resolver: createResolver({ pins: config.resolve }),
    txt: createTxtLookup(values['dns-server'] ? { servers: values['dns-server'] } : {}),
    allowLoopback: config.crawlAllowLoopback,
    crawlerInfoUrl: config.crawlerInfoUrl,
    ...(template ? { origin: (host: string) => template.replace('{host}', host) } : {}),
  });
  return new Ownership({ repo: repos.webmaster, checkers });
}
