/**
 * The contract of the webmaster repository (issue 11), run against both backends (webmaster-repo-sqlite.test.ts,
 * webmaster-repo-postgres.test.ts). `open` must give fresh, empty, migrated repositories each time.
 */
import type { Test } from 'tap';
import { createHash } from 'node:crypto';
import type { Repositories } from '../../state/repos/types.js';
import { AUDIT_EVENTS, AUDIT_OUTCOMES, PROOF_METHODS } from '../../state/repos/webmaster-types.js';

export type OpenRepos = (name: string) => Promise<Repositories>;

const T0 = Date.UTC(2026, 10, 21, 10, 0, 0);
const iso = (ms: number) => new Date(T0 + ms).toISOString();
const DAY = Date.UTC(2026, 10, 21);
const sha = (s: string) => createHash('sha256').update(s).digest();

async function withRepos(t: Test, open: OpenRepos, name: string): Promise<Repositories> {
  const r = await open(name);
  t.teardown(() => r.close());
  return r;
}

export function webmasterContract(t: Test, open: OpenRepos): void {
  t.test('issue 11: properties are per account, kind and name; creating twice returns the first', async (t) => {
    const { webmaster: w } = await withRepos(t, open, 'wm_props');
    const a = await w.createProperty({ account: 'acct_a', kind: 'domain', name: 'example.ca', at: iso(0) });
    t.equal(a.created, true);
    t.match(a.property, { kind: 'domain', name: 'example.ca', account: 'acct_a', createdAt: iso(0) });
    const again = await w.createProperty({ account: 'acct_a', kind: 'domain', name: 'example.ca', at: iso(5) });
    t.same(again, { property: a.property, created: false });
    const host = await w.createProperty({ account: 'acct_a', kind: 'host', name: 'www.example.ca', at: iso(1) });
    const other = await w.createProperty({ account: 'acct_b', kind: 'domain', name: 'example.ca', at: iso(2) });
    t.equal(other.created, true, 'another account may claim the same name (each proves it on its own)');
    t.same(
      (await w.listProperties('acct_a')).map((p) => p.id),
      [a.property.id, host.property.id],
    );
    t.same((await w.listProperties()).length, 3);
    t.same(await w.getProperty(host.property.id), host.property);
    t.equal(await w.getProperty('nope'), null);
  });

  t.test('issue 11: proofs keep the hash only; updates apply the given fields', async (t) => {
    const { webmaster: w } = await withRepos(t, open, 'wm_proofs');
    const { property } = await w.createProperty({ account: 'acct_a', kind: 'host', name: 'h.example.ca', at: iso(0) });
    const p = await w.addProof({
      propertyId: property.id,
      method: 'meta_tag',
      tokenHash: sha('secret-1'),
      createdAt: iso(1),
      expiresAt: iso(1000),
    });
    t.match(p, {
      propertyId: property.id,
      method: 'meta_tag',
      state: 'pending',
      createdAt: iso(1),
      expiresAt: iso(1000),
      verifiedAt: null,
      graceUntil: null,
      endedAt: null,
    });
    t.ok(p.tokenHash.equals(sha('secret-1')));
    t.equal(await w.updateProof(p.id, { state: 'verified', verifiedAt: iso(2), checkedAt: iso(2), expiresAt: iso(5000) }), true);
    t.match(await w.getProof(p.id), { state: 'verified', verifiedAt: iso(2), checkedAt: iso(2), expiresAt: iso(5000), graceUntil: null });
    t.equal(await w.updateProof(p.id, { graceUntil: iso(3000) }), true);
    t.match(await w.getProof(p.id), { state: 'verified', graceUntil: iso(3000) }, 'other fields untouched');
    t.equal(await w.updateProof('missing', { state: 'revoked' }), false);
    const q = await w.addProof({
      propertyId: property.id,
      method: 'dns_txt',
      tokenHash: sha('secret-2'),
      createdAt: iso(3),
      expiresAt: iso(1000),
    });
    t.same(
      (await w.proofs(property.id)).map((x) => x.id),
      [p.id, q.id],
    );
  });

  t.test('issue 11: the audit log accepts every closed value and nothing else', async (t) => {
    const { webmaster: w } = await withRepos(t, open, 'wm_audit');
    for (const event of AUDIT_EVENTS) await w.audit({ at: iso(0), event, propertyId: 'p1', method: null, outcome: 'ok' });
    for (const outcome of AUDIT_OUTCOMES)
      await w.audit({ at: iso(1), event: 'proof_check_failed', propertyId: 'p2', method: PROOF_METHODS[0], outcome });
    t.equal((await w.auditLog('p1')).length, AUDIT_EVENTS.length);
    t.same(
      (await w.auditLog('p2')).map((e) => e.outcome),
      [...AUDIT_OUTCOMES],
    );
    t.equal((await w.auditLog()).length, AUDIT_EVENTS.length + AUDIT_OUTCOMES.length);
    // Free text cannot be written: the columns are CHECKed against the vocabularies.
    await t.rejects(w.audit({ at: iso(2), event: 'user typed this' as never, propertyId: 'p1', method: null, outcome: 'ok' }));
    await t.rejects(
      w.audit({ at: iso(2), event: 'proof_verified', propertyId: 'p1', method: null, outcome: 'https://x.example/' as never }),
    );
    t.equal((await w.auditLog('p1')).length, AUDIT_EVENTS.length);
  });

  t.test('issue 11: fast lane — idempotency, same-day dedup, daily quota (only accepted counts)', async (t) => {
    const { webmaster: w } = await withRepos(t, open, 'wm_fast');
    const { property } = await w.createProperty({ account: 'acct_a', kind: 'host', name: 'h.example.ca', at: iso(0) });
    const sub = (url: string, key: string | null, day = DAY) =>
      w.submitFastLane({ propertyId: property.id, url, idempotencyDigest: key === null ? null : sha(key), day, perDay: 2, at: iso(1) });
    const first = await sub('http://h.example.ca/a', 'k1');
    t.equal(first.outcome, 'accepted');
    t.match(await sub('http://h.example.ca/a', 'k1'), { outcome: 'replayed', submission: { url: 'http://h.example.ca/a' } });
    t.match(await sub('http://h.example.ca/b', 'k1'), { outcome: 'conflict', submission: { url: 'http://h.example.ca/a' } });
    t.match(await sub('http://h.example.ca/a', 'k2'), { outcome: 'duplicate' });
    t.match(await sub('http://h.example.ca/a', null), { outcome: 'duplicate' });
    t.equal(await w.fastLaneUsed(property.id, DAY), 1);
    t.equal((await sub('http://h.example.ca/b', null)).outcome, 'accepted');
    t.same(await sub('http://h.example.ca/c', 'k3'), { outcome: 'quota_exceeded', used: 2 });
    t.equal(await w.fastLaneUsed(property.id, DAY), 2);
    t.equal((await sub('http://h.example.ca/c', 'k3', DAY + 86_400_000)).outcome, 'accepted', 'a new UTC day has a new quota');
  });

  t.test('issue 11: concurrent fast-lane submissions admit exactly the quota', async (t) => {
    const { webmaster: w } = await withRepos(t, open, 'wm_race');
    const { property } = await w.createProperty({ account: 'acct_a', kind: 'host', name: 'h.example.ca', at: iso(0) });
    const all = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        w.submitFastLane({
          propertyId: property.id,
          url: `http://h.example.ca/${i}`,
          idempotencyDigest: null,
          day: DAY,
          perDay: 5,
          at: iso(1),
        }),
      ),
    );
    t.equal(all.filter((d) => d.outcome === 'accepted').length, 5);
    t.equal(all.filter((d) => d.outcome === 'quota_exceeded').length, 7);
    t.equal(await w.fastLaneUsed(property.id, DAY), 5);
  });
}
