/**
 * /metrics tells an operator how far the writer's published engine segments trail its postings: the version of the
 * newest segment published and how long changes have waited unpublished (what a restarted replica would otherwise
 * catch up from the table).
 */
import t from 'tap';
import { PassageIndex } from '../../index/engines/lance/store.js';
import { makePage } from '../helpers/page-input.js';
import { startTestService } from '../helpers/service.js';

async function scrape(url: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const line of (await (await fetch(`${url}/metrics`)).text()).split('\n')) {
    const m = /^([a-z_]+(?:\{[^}]*\})?) (\S+)$/.exec(line);
    if (m) out.set(m[1]!, Number(m[2]));
  }
  return out;
}

t.test('the writer reports the version of its newest published segment and how long changes wait unpublished', async (t) => {
  const s = await startTestService();
  t.teardown(s.close);
  // One shard (the default): its writer's publication, unlabelled.
  const served = s.services.deps.index;
  const index = served instanceof PassageIndex ? served : served.shards[0]!;
  t.equal(served instanceof PassageIndex ? 1 : served.shards.length, 1);
  await index.upsertPages([makePage(1, 'a.example.ca', ['alpha one', 'alpha two']), makePage(2, 'b.example.ca', ['beta'])]);
  await index.textEngineReady();
  const before = await scrape(s.url);
  // The write is held, not published yet: neither 2,000 documents nor the time rule's 30 s since the open's base.
  t.ok(
    before.get('svc_text_engine_published_version')! < before.get('svc_index_version')!,
    `the newest published segment (${before.get('svc_text_engine_published_version')}) trails the index (${before.get('svc_index_version')})`,
  );
  t.ok(before.get('svc_text_engine_unpublished_seconds')! >= 0, 'and the unpublished wait is reported');

  await index.engineDeltaNow();
  const m = await scrape(s.url);
  t.equal(m.get('svc_text_engine_published_version'), m.get('svc_index_version'), "published up to the table's version");
  t.equal(m.get('svc_text_engine_published_version'), m.get('svc_text_postings_version'), "and to the postings'");
  t.equal(m.get('svc_text_engine_unpublished_seconds'), 0, 'nothing waits unpublished');
  t.ok(
    (m.get('svc_text_engine_images{kind="deltas"}') ?? 0) + (m.get('svc_text_engine_images{kind="published"}') ?? 0) >= 1,
    'the publications counted',
  );
});
