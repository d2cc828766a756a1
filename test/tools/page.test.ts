import t, { type Test } from 'tap';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { loadConfig } from '../../config.js';
import { createLogger } from '../../logger.js';
import { openStateDb } from '../../state/db.js';
import { sqliteEntities, sqliteRepositories } from '../../state/repos/sqlite.js';
import { Documents } from '../../state/documents.js';
import { EntityStore } from '../../state/entities.js';
import { PassageIndex } from '../../index/engines/lance/store.js';
import type { PageInput } from '../../page-model.js';
import { callTool } from '../../tools/call-tool.js';
import type { ServiceDeps } from '../../tools/deps.js';
import { pageTool } from '../../tools/page.js';
import { imagesTool } from '../../tools/images.js';
import type { SvcError } from '../../errors.js';

async function setup(t: Test, images = true) {
  const dir = t.testdir();
  const config = loadConfig({ env: {}, flags: { dataDir: dir, images } });
  const db = openStateDb(join(dir, 'state.sqlite'));
  const index = await PassageIndex.open({ dir: join(dir, 'lance'), embedder: null });
  t.teardown(async () => {
    await index.close();
    db.close();
  });
  const documents = new Documents(db);
  const deps: ServiceDeps = {
    config,
    repos: sqliteRepositories(db),
    log: createLogger({ level: 'silent' }),
    now: () => new Date(),
    index,
    entities: sqliteEntities(new EntityStore(db)),
    crawler: null,
  };
  const ctx = { deps, caller: { keyId: 'k', digest: createHash('sha256').update('k').digest('hex') } };
  return { deps, ctx, index, documents };
}

function pageInput(pageRef: number, over: Partial<PageInput> = {}): PageInput {
  const passages = Array.from({ length: 5 }, (_, i) => ({
    ordinal: i,
    text: `Passage ${i} about the harbour ferry schedule. SECRET-${i}`,
    snippetText: `Passage ${i} about the harbour ferry schedule.`,
    headingPath: ['Ferry', `Part ${i}`],
  }));
  return {
    pageRef,
    url: `https://ferry.example.ca/p${pageRef}`,
    canonicalUrl: null,
    host: 'ferry.example.ca',
    title: `Ferry ${pageRef}`,
    description: '',
    lang: 'en',
    publishedAt: null,
    modifiedAt: null,
    dateSource: 'none',
    fetchedAt: '2026-04-01T00:00:00.000Z',
    contentHash: `h${pageRef}`,
    snippet: { nosnippet: false, maxSnippet: null },
    filetype: 'html',
    signals: { declaredTypes: [], addressCountries: [], addressRegions: [] },
    passages,
    images: [{ src: 'https://ferry.example.ca/img/boat.jpg', alt: 'Blue ferry boat at the harbour', width: 640, height: 480 }],
    ...over,
  };
}

t.test('svc_page: ordered passages, paging, snippetText only, content_trust', async (t) => {
  const { ctx, index } = await setup(t);
  await index.upsertPage(pageInput(1));
  const first = await callTool(pageTool, { page_ref: 1, limit: 2 }, ctx);
  t.equal(first.total, 5);
  t.same(
    first.passages.map((p) => p.ordinal),
    [0, 1],
  );
  t.equal(first.next_offset, 2);
  t.equal(first.url, 'https://ferry.example.ca/p1');
  t.notOk(
    first.passages.some((p) => p.text.includes('SECRET')),
    'data-nosnippet text never served',
  );
  t.ok(first.passages.every((p) => p.content_trust === 'untrusted_web_content'));
  t.same(first.passages[1]?.heading_path, ['Ferry', 'Part 1']);
  const last = await callTool(pageTool, { page_ref: 1, offset: 4, limit: 40 }, ctx);
  t.same(
    last.passages.map((p) => p.ordinal),
    [4],
  );
  t.equal(last.next_offset, undefined, 'absent at the end');
  t.notOk('next_offset' in last);
  const beyond = await callTool(pageTool, { page_ref: 1, offset: 10 }, ctx);
  t.same(beyond.passages, []);
  t.equal(beyond.total, 5);
});

t.test('svc_page: nosnippet serves nothing, max-snippet cuts each passage', async (t) => {
  const { ctx, index } = await setup(t);
  await index.upsertPage(pageInput(2, { snippet: { nosnippet: true, maxSnippet: null } }));
  await index.upsertPage(pageInput(3, { snippet: { nosnippet: false, maxSnippet: 12 } }));
  const ns = await callTool(pageTool, { page_ref: 2, limit: 40 }, ctx);
  t.same(ns.passages, []);
  t.equal(ns.total, 5);
  t.same(ns.snippet_policy, { nosnippet: true, max_snippet: null });
  t.equal(ns.warnings[0]?.code, 'snippet_restricted');
  t.equal(ns.next_offset, undefined, 'no paging around the rule');
  const ms = await callTool(pageTool, { page_ref: 3, limit: 40 }, ctx);
  t.ok(ms.passages.every((p) => p.text.length <= 12));
  t.equal(ms.passages[0]?.text, 'Passage 0 ab');
  t.same(
    ms.warnings.map((w) => w.code),
    ['truncated_passage'],
  );
});

t.test('svc_page: unknown page_ref → 404, bounds → 422', async (t) => {
  const { ctx } = await setup(t);
  const e = await callTool(pageTool, { page_ref: 999 }, ctx).catch((x: SvcError) => x);
  t.equal((e as SvcError).code, 'not_found');
  for (const bad of [
    { page_ref: 1, limit: 0 },
    { page_ref: 1, limit: 41 },
    { page_ref: 0 },
    { page_ref: 1, offset: -1 },
    {},
    { page_ref: 'x' },
  ]) {
    const v = await callTool(pageTool, bad, ctx).catch((x: SvcError) => x);
    t.equal((v as SvcError).code, 'validation_failed', JSON.stringify(bad));
  }
});

t.test('svc_images: metadata and rights notice; empty index → empty list; disabled → feature_disabled', async (t) => {
  const { ctx, index } = await setup(t);
  const empty = await callTool(imagesTool, { q: 'ferry' }, ctx);
  t.same(empty.images, []);
  t.match(empty.notice, /No usage rights are implied/);
  await index.upsertPage(pageInput(4));
  const hit = await callTool(imagesTool, { q: 'ferry boat' }, ctx);
  t.same(hit.images, [
    {
      image_url: 'https://ferry.example.ca/img/boat.jpg',
      alt: 'Blue ferry boat at the harbour',
      width: 640,
      height: 480,
      page_ref: 4,
      page_url: 'https://ferry.example.ca/p4',
      host: 'ferry.example.ca',
    },
  ]);
  const off = await setup(t, false);
  const e = await callTool(imagesTool, { q: 'ferry' }, off.ctx).catch((x: SvcError) => x);
  t.equal((e as SvcError).code, 'feature_disabled');
  t.equal(imagesTool.enabled?.(off.deps.config), false);
});
