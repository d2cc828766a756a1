/**
 * A whole service with search threads over a few pages (tools/search-pool.ts), and a REST search against it: what
 * the search-pool tests share.
 */
import type { Test } from 'tap';
import type { Embedder } from '../../index/serving/embedder.js';
import { makePage } from './page-input.js';
import { api, startTestService, type TestService } from './service.js';

export const NOW = new Date('2026-11-21T00:00:00Z');

export const TOPICS = [
  ['www.canada.ca', 'Passport fees', 'Adult passport fees and payment options for a ten-year passport.'],
  ['www.ontario.ca', 'Driver licence renewal', 'Renew a driver licence online, by mail or at a ServiceOntario centre.'],
  ['ville.quebec.qc.ca', 'Bibliothèque Gabrielle-Roy', 'Heures d’ouverture de la bibliothèque Gabrielle-Roy et prêts de livres.'],
  ['www.gov.bc.ca', 'Wildfire status', 'Current wildfire status, evacuation orders and air quality advisories in British Columbia.'],
  ['www.alberta.ca', 'Health card', 'Apply for or renew an Alberta health care insurance card; passport or licence as proof.'],
] as const;

/** A service with `threads` search threads holding the TOPICS pages, closed when the test ends. */
export async function poolService(t: Test, threads: number, embedder?: Embedder | null): Promise<TestService> {
  const s = await startTestService({
    perMinute: 10_000,
    now: () => NOW,
    config: { searchThreads: threads },
    ...(embedder !== undefined ? { embedder } : {}),
  });
  t.teardown(() => s.close());
  let ref = 1;
  for (const [host, title, text] of TOPICS) {
    await s.services.deps.index.upsertPage(
      makePage(ref++, host, [text], { title, publishedAt: '2026-10-01T00:00:00Z', dateSource: 'schema.org' }),
    );
  }
  if (threads > 0) t.ok(await s.services.searchPool?.whenReady(60_000), 'every search thread opened the index');
  return s;
}

export const restSearch = async (s: TestService, q: string, extra = '') => {
  const r = await api(s, `/api/v1/search?q=${encodeURIComponent(q)}&detail=full${extra}`);
  return r as { status: number; body: { results: { url: string; host: string }[]; ranking: string; warnings: { code: string }[] } };
};
