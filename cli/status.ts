import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { Frontier } from '../crawler/frontier.js';
import { PassageIndex } from '../index/store.js';
import { indexLocation } from '../index/location.js';
import { stateFile } from '../main.js';
import { openStateDb } from '../state/db.js';
import type { CliIo } from './io.js';

/** `svc status [--json] [--data-dir D]`: what the data dir holds — index, documents, frontier, keys. */
export async function statusCommand(argv: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { json: { type: 'boolean', default: false }, 'data-dir': { type: 'string' } } });
  const config = loadConfig({ env: io.env, flags: { dataDir: values['data-dir'] } });
  const db = openStateDb(stateFile(config));
  try {
    const index = await PassageIndex.open({ location: indexLocation(config), embedder: null });
    const stats = await index.stats();
    await index.close();
    const documents = Object.fromEntries(
      (db.prepare('SELECT status, count(*) AS n FROM documents GROUP BY status').all() as { status: string; n: number }[]).map((r) => [r.status, r.n]),
    );
    const frontier = new Frontier(db).counts();
    const keys = db.prepare('SELECT count(*) AS total, count(revoked_at) AS revoked FROM api_keys').get() as { total: number; revoked: number };
    const out = {
      data_dir: config.dataDir,
      index: { pages: stats.pages, passages: stats.passages, vectors: stats.vectors },
      documents,
      frontier,
      keys: { active: keys.total - keys.revoked, revoked: keys.revoked },
    };
    if (values.json) io.stdout.write(JSON.stringify(out) + '\n');
    else {
      io.stdout.write(`data dir   ${out.data_dir}\n`);
      io.stdout.write(`index      ${out.index.pages} pages, ${out.index.passages} passages, ${out.index.vectors} vectors\n`);
      io.stdout.write(`documents  ${Object.entries(documents).map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}\n`);
      io.stdout.write(`frontier   ${Object.entries(frontier).map(([k, v]) => `${k} ${v}`).join(', ')}\n`);
      io.stdout.write(`keys       ${out.keys.active} active, ${out.keys.revoked} revoked\n`);
    }
    return 0;
  } finally {
    db.close();
  }
}
