import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { StateDb } from '../state/db.js';
import type { Documents } from '../state/documents.js';
import type { PassageIndex } from '../index/store.js';

/**
 * The services every tool handler may use, built once by main.ts (createServices) and passed in — never module
 * singletons, so a test can build a whole service in a temp dir. Each area adds its own member here.
 */
export interface ServiceDeps {
  readonly config: Config;
  readonly db: StateDb;
  readonly documents: Documents;
  readonly log: Logger;
  /** The clock (tests inject a fixed one). */
  readonly now: () => Date;
  /** The LanceDB passage index (svc_search, svc_context, page passages). */
  readonly index: PassageIndex;
}
