import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { openIndex, ShardedIndex } from '../index/shards/sharded-index.js';
import { indexLocation } from '../index/engines/lance/location.js';
import { openRepositories, stateOptions } from '../state/repos/open.js';
import type { CliIo } from './io.js';

/** `svc status [--json] [--data-dir D]`: what the data dir holds — index, documents, frontier, keys. */
export async function statusCommand(argv: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { json: { type: 'boolean', default: false }, 'data-dir': { type: 'string' } } });
  const config = loadConfig({ env: io.env, flags: { dataDir: values['data-dir'] } });
  // The state through the repositories (PostgreSQL with SVC_DATABASE_URL, else the data dir's SQLite file).
  const repos = await openRepositories(stateOptions(config));
  try {
    // One dataset or N shards: the totals, and for a sharded index each shard's share.
    const index = await openIndex({ location: indexLocation(config), embedder: null, textEngine: false, writes: false });
    const stats = await index.stats();
    const shards =
      index instanceof ShardedIndex
        ? await Promise.all(
            index.shards.map(async (s, i) => {
              const st = await s.stats();
              return { shard: index.heldShards[i]!, pages: st.pages, passages: st.passages, vectors: st.vectors };
            }),
          )
        : null;
    // The newest persisted engine segment per dataset beside the table's version: what a reader that opens now (a
    // restarted replica) loads, and how far it then catches up from the table.
    const held = index instanceof ShardedIndex ? index.shards : [index];
    const segments = await Promise.all(
      held.map(async (s, i) => {
        const st = await s.engineSegmentsStatus();
        return {
          ...(index instanceof ShardedIndex ? { shard: index.heldShards[i]! } : {}),
          version: st?.version ?? null,
          table_version: st?.tableVersion ?? (await s.version()),
          files: st?.files ?? 0,
          written: st ? new Date(st.writtenMs).toISOString() : null,
        };
      }),
    );
    const reembed = await index.reembedProgress();
    const vectorModel = index.storedVectorModel;
    await index.close();
    const documents = await repos.documents.counts();
    const frontier = await repos.frontier.counts();
    const allKeys = await repos.keys.list();
    const revoked = allKeys.filter((k) => k.revokedAt !== null).length;
    const keys = { total: allKeys.length, revoked };
    const out = {
      data_dir: config.dataDir,
      index: {
        pages: stats.pages,
        passages: stats.passages,
        vectors: stats.vectors,
        // The model of the stored vectors (null: none, or a re-embedding in progress), and that re-embedding.
        vector_model: vectorModel,
        reembedding: reembed ? { model: reembed.modelId, done: reembed.done, total: reembed.total } : null,
        // null: one dataset.
        shards,
        // Per dataset (shard): the newest engine segment's table version (null: none published) and the table's.
        segments,
      },
      documents,
      frontier,
      keys: { active: keys.total - keys.revoked, revoked: keys.revoked },
    };
    if (values.json) io.stdout.write(JSON.stringify(out) + '\n');
    else {
      io.stdout.write(`data dir   ${out.data_dir}\n`);
      io.stdout.write(
        `index      ${out.index.pages} pages, ${out.index.passages} passages, ${out.index.vectors} vectors${vectorModel ? ` (${vectorModel})` : ''}\n`,
      );
      for (const s of shards ?? [])
        io.stdout.write(`  shard ${s.shard} of ${shards!.length}: ${s.pages} pages, ${s.passages} passages, ${s.vectors} vectors\n`);
      for (const g of segments) {
        const where = 'shard' in g ? ` (shard ${g.shard})` : '';
        io.stdout.write(
          g.version === null
            ? `segments   none published${where}: a reader scans the table at open\n`
            : `segments   newest at index version ${g.version} of ${g.table_version}${where}: a base and ${g.files - 1} deltas, written ${g.written}\n`,
        );
      }
      if (reembed) {
        const pct = reembed.total > 0 ? Math.floor((100 * reembed.done) / reembed.total) : 100;
        io.stdout.write(
          `vectors    re-embedding with ${reembed.modelId}: ${reembed.done}/${reembed.total} passages (${pct}%); the index's writer continues it (svc serve, or svc reindex --vectors)\n`,
        );
      }
      io.stdout.write(
        `documents  ${
          Object.entries(documents)
            .map(([k, v]) => `${k} ${v}`)
            .join(', ') || 'none'
        }\n`,
      );
      io.stdout.write(
        `frontier   ${Object.entries(frontier)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')}\n`,
      );
      io.stdout.write(`keys       ${out.keys.active} active, ${out.keys.revoked} revoked\n`);
    }
    return 0;
  } finally {
    await repos.close();
  }
}
