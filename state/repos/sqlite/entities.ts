import type { EntityStore } from '../../entities.js';
import { type EntitiesRepo } from '../types.js';

/** The entities repository over today's EntityStore (its synchronous transactions, unchanged). */
export function sqliteEntities(store: EntityStore): EntitiesRepo {
  return {
    get: async (id) => store.get(id),
    search: async (q) => store.search(q),
    observePage: async (page, nodes, at, parseErrors) => store.observePage(page, nodes, at, parseErrors),
    withdrawPage: async (pageRef) => store.withdrawPage(pageRef),
    importRows: async (dataset, rows, at, verifiedAt) => store.importRows(dataset, rows, at, verifiedAt),
    parseErrors: async (hosts) => store.parseErrors(hosts),
    counts: async () => store.counts(),
  };
}
