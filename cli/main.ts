import { setLanceCpuThreads } from '../index/engines/lance/lance-threads.js';
import { ConfigError } from '../config.js';
import { IndexOpenError } from '../index/engines/lance/location.js';
import { COMMAND_HELP, wantsHelp } from './help.js';
import { processIo, UsageError, type CliIo, type Command } from './io.js';

const USAGE = `svc — independent web search and agent context

usage: svc <command> [options]
  serve      run the HTTP service (REST /api/v1, MCP /mcp, web pages) with the crawler and indexer
  keys       create | list | revoke API keys
  crawl      crawl from seeds into the index
  ingest     add a BEIR-format corpus (JSONL) to the index
  reindex    --vectors: give every passage a vector of the configured model
  eval       nDCG@10 / recall@100 of the index on a BEIR dataset
  entities   import Statistics Canada open databases
  fixtures   serve the local test web on loopback (crawl it end to end without the internet)
  openapi    print the OpenAPI 3.1 document of /api/v1
  status     what the data dir holds: index, documents, frontier, keys
  migrate    apply pending state migrations (SQLite in the data dir, or PostgreSQL with SVC_DATABASE_URL)
  webmaster  operator commands for the webmaster foundation (planned, not exposed: docs/webmaster.md)

Every command accepts --data-dir D (default ./data, env SVC_DATA_DIR). svc <command> --help for its options.`;

// Each command's module is loaded when it runs: `svc serve` starts without the code of eval, ingest, fixtures and the rest.
const commands: Record<string, () => Promise<Command>> = {
  serve: async () => (await import('./serve.js')).serveCommand,
  keys: async () => (await import('./keys.js')).keysCommand,
  crawl: async () => {
    const { crawlCommand } = await import('./crawl.js');
    return (argv, io) => crawlCommand(argv, io);
  },
  entities: async () => (await import('./entities.js')).entitiesCommand,
  ingest: async () => (await import('./ingest.js')).ingestCommand,
  reindex: async () => (await import('./reindex.js')).reindexCommand,
  eval: async () => (await import('./eval.js')).evalCommand,
  fixtures: async () => (await import('./fixtures.js')).fixturesCommand,
  openapi: async () => (await import('./openapi.js')).openapiCommand,
  status: async () => (await import('./status.js')).statusCommand,
  migrate: async () => (await import('./migrate.js')).migrateCommand,
  webmaster: async () => (await import('./webmaster.js')).webmasterCommand,
};

/** Entry point of the `svc` command; returns the exit code. */
export async function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  setLanceCpuThreads(); // the process entry owns the environment; an operator's own value wins
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write(USAGE + '\n');
    return name ? 0 : 2;
  }
  const load = Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (!load) {
    io.stderr.write(`svc: unknown command "${name}"\n\n${USAGE}\n`);
    return 2;
  }
  if (wantsHelp(rest)) {
    io.stdout.write(`${COMMAND_HELP[name] ?? USAGE}\n`);
    return 0;
  }
  try {
    return await (
      await load()
    )(rest, io);
  } catch (err) {
    if (err instanceof UsageError || err instanceof ConfigError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      io.stderr.write(`svc: ${(err as Error).message}\n`);
      return 2;
    }
    // The index location is unreachable or refuses us: a line for the operator (already free of secrets), no stack.
    if (err instanceof IndexOpenError) {
      io.stderr.write(`svc: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}
