/**
 * The help text of every `svc` command, in one place: `svc <command> --help` (or `-h`) prints it and exits 0, before
 * the command parses anything, so help works the same for every command and never needs a data dir.
 */

const DATA_DIR = '  --data-dir D          data folder (env SVC_DATA_DIR, default ./data)';

export const COMMAND_HELP: Readonly<Record<string, string>> = {
  webmaster: `usage: svc webmaster <sub-command> [--issuer URL --subject SUB] [options] [--data-dir D]
  Operator commands for the webmaster foundation (issue 11; planned, NOT exposed: no route, tool or page).
  Owner-scoped commands take the owner's authenticated OIDC identity: --issuer (https URL) and --subject.
    property create --kind domain|host --name NAME
    property list
    proof issue|rotate --property ID --method dns_txt|meta_tag|well_known   (prints the challenge once)
    proof verify --property ID --method M      (exit 1 when not found)
    proof revoke --proof ID
    status --property ID
    reverify [--every S]                       (re-verify every verified proof; --every: again every S seconds until stopped)
    audit [--property ID]
    diagnostics --property ID                  (verified properties only)
    submit --property ID --url URL [--idempotency-key K]   (fast lane; env SVC_WEBMASTER_FAST_LANE_PER_DAY)
  --dns-server A:P      DNS server for TXT lookups (repeatable; default the system's)
  --proof-origin T      origin of the meta-tag / well-known lookups, {host} replaced (default https://{host})
  --resolve H:P:A       pin a host name, curl-style (repeatable; env SVC_RESOLVE)
  --allow-loopback      let proof lookups reach loopback (the local test web; env SVC_CRAWL_ALLOW_LOOPBACK=1)`,
  serve: `usage: svc serve [--host H] [--port P] [--data-dir D] [--no-crawl] [--allow-loopback] [--resolve H:P:A]…
                 [--role all|api|crawler|indexer|searcher] [--lease-ms MS] [--shards LIST]
  Runs the HTTP service (REST /api/v1, MCP /mcp, the web pages) with the crawler and the indexer in one process.
  The crawler works through the stored frontier; each entry keeps the scope it was admitted with (README: crawl scope).
  --host H              listen address (env SVC_HOST, default 127.0.0.1)
  --port P              listen port (env SVC_PORT, default 8787; 0 = any free port)
${DATA_DIR}
  --no-crawl            serve only: no crawler, no URL-request processing (env SVC_CRAWL=0)
  --allow-loopback      let the crawler reach loopback addresses, e.g. svc fixtures serve (env SVC_CRAWL_ALLOW_LOOPBACK=1)
  --resolve H:P:A       pin a host name to an address, curl-style (repeatable; env SVC_RESOLVE)
  --role R              all (default: everything in this process); api (serves, never crawls or writes the index);
                        crawler (fetches and extracts into the outbox); indexer (the index's only writer: drains the
                        outbox); searcher (serves --shards of a sharded index to the api replicas on an internal
                        route, env SVC_FLEET_SECRET, SVC_SEARCHER_URL). Every role serves HTTP with /readyz; see
                        docs/deploy.md
  --shards LIST         searcher: the shards it serves, e.g. 0,1 or 0-3 (default every shard)
  --lease-ms MS         lease of claimed work, kept alive while worked on: a killed crawler's URLs come back to the
                        other crawlers (default 40000), a killed indexer's outbox batch to the next indexer (default
                        30000), after at most this long
  --shards LIST         indexer: the shards of a sharded index it writes, e.g. 0-3 or 0,2 (default: every shard). One
                        writer per shard: held under a lease in the state database (SVC_SHARD_LEASE_S, default 20),
                        a start asking for a held shard exits 1 naming it and its owner (docs/deploy.md)`,
  keys: `usage:
  svc keys create --name NAME [--per-minute N] [--per-day N] [--json] [--data-dir D]
  svc keys list [--json] [--data-dir D]
  svc keys revoke ID [--data-dir D]
  Issues, lists and revokes API keys. A new key is printed once; only its SHA-256 digest is stored.`,
  crawl: `usage: svc crawl --seeds URL… | --seeds-file F [--max-pages N] [--stay-on-hosts] [--wait S] [--timeout S]
                 [--resolve HOST:PORT:ADDR]… [--allow-loopback] [--data-dir D] [--gap-ms MS] [--concurrency N]
                 [--lease-ms MS]
  Crawls from the seeds into the index, then exits 0 when nothing is due within --wait seconds (what is still
  queued for later is listed, with when it is due). Running it again resumes; svc serve continues the same frontier.
  Ctrl-C or SIGTERM stops it: the URLs in flight go back to the frontier, the summary is printed, exit 0.
  Off a terminal, a progress line every SVC_PROGRESS_MS (default 5000). With a model on an index without its
  vectors, the pages already there are embedded after the crawl (svc reindex --vectors; SVC_REEMBED=manual: not).
  --seeds URL…          start URLs (repeat the flag or list them after it)
  --seeds-file F        one start URL per line (# comments allowed)
  --max-pages N         stop after N pages have been dispatched
  --stay-on-hosts       follow links only on the seeds' hosts; the scope is stored with every entry, so svc serve
                        keeps to it too (without it: links lead anywhere on the open web)
  --wait S              wait at most S seconds for an item that is not due yet (a retry, a back-off) (default 30)
  --timeout S           give up after S seconds
  --resolve H:P:A       pin a host name to an address, curl-style (repeatable; env SVC_RESOLVE)
  --allow-loopback      let the crawler reach loopback addresses (env SVC_CRAWL_ALLOW_LOOPBACK=1)
${DATA_DIR}
  --gap-ms MS           minimum gap between two requests to one host (env SVC_CRAWL_GAP_MS, default 1000)
  --concurrency N       hosts fetched at once (env SVC_CRAWL_CONCURRENCY, default 8)
  --lease-ms MS         lease of a claimed URL, kept alive while it is worked on: after a crash (kill -9) the URLs the
                        dead process held come back to any crawler after at most this long (default 40000)`,
  ingest: `usage: svc ingest --jsonl FILE [--name N] [--embedder auto|none|hashing] [--batch N] [--data-dir D]
  Adds a BEIR-format corpus (JSONL, .gz accepted) to the index through the same path as crawled pages.
  Ctrl-C or SIGTERM stops reading: the records read so far are written, the summary is printed, exit 130.
  With a model on an index without its vectors, the new records are embedded, then the ones already there
  (svc reindex --vectors; SVC_REEMBED=manual: not). Off a terminal, a progress line every SVC_PROGRESS_MS.
  --name N              corpus name (default: from the file or folder name)
  --embedder E          auto (the model SVC_MODEL names in SVC_MODEL_DIR, if present; unset: multilingual-e5-small,
                        or the model of the index's vectors), none (BM25 only) or hashing
  --batch N             documents written per batch (default 256)
${DATA_DIR}`,
  reindex: `usage: svc reindex --vectors [--embedder auto|model|hashing] [--batch N] [--shards LIST] [--data-dir D]
  Gives every passage a vector of the configured model (SVC_MODEL_DIR, SVC_MODEL; unset: multilingual-e5-small, or the
  model of the index's vectors) when the index was built without vectors or with another model; the vector arm serves
  once all have one. The index's writer (svc serve, svc ingest, svc crawl) does the same by itself unless
  SVC_REEMBED=manual; run this while no other process writes the index.
  Progress: a line every SVC_PROGRESS_MS (default 5000) when stdout is not a terminal. Ctrl-C or SIGTERM stops after
  the batch in hand (what is done is kept, the next run resumes; exit 130).
  --embedder E          auto or model (the model of SVC_MODEL_DIR), or hashing (the deterministic stand-in)
  --batch N             passages embedded and written per batch (default 64)
  --shards LIST         a sharded index: only these shards, e.g. 0-1 or 2 (default: every shard)
${DATA_DIR}`,
  eval: `usage: svc eval --beir DIR [--mode bm25|vector|hybrid] [--json] [--name N] [--embedder auto|none|hashing] [--data-dir D]
  nDCG@10 and recall@100 of the index on a BEIR dataset (corpus ingested first with svc ingest), through the same
  search path REST and MCP callers use.`,
  entities: `usage: svc entities import --odhf FILE | --odcaf FILE | --odbus FILE | --odef FILE [--as-of DATE] [--data-dir D]
  Imports a Statistics Canada open database (UTF-8 CSV, .gz accepted) into the entity store.
  Re-importing the same file updates the same records; nothing is duplicated. Rows of the same establishment in
  several databases (and on crawled pages) become one entity, every source kept as an observation with its licence.
  --as-of DATE          when the source last confirmed its rows (ISO date; default: the known release date of
                        the dataset version), reported as last_verified_at`,
  fixtures: `usage: svc fixtures serve [--port P] [--host 127.0.0.1]
  Serves the local test web (virtual hosts such as alpha.test, ville-quebec.test) on loopback and prints the
  --resolve pins and a ready-to-run svc crawl command. Stops on Ctrl-C.`,
  openapi: `usage: svc openapi
  Prints the OpenAPI 3.1 document of /api/v1 (docs/openapi.json is this output).`,
  status: `usage: svc status [--json] [--data-dir D]
  What the data dir holds: index pages and passages (a sharded index: each shard's and the totals), documents by
  status, the frontier by state, keys.`,
  migrate: `usage: svc migrate [--json] [--data-dir D]
  Applies pending state migrations and lists them: to PostgreSQL when SVC_DATABASE_URL=postgres://… is set, else to
  the SQLite file in the data dir. Every command also migrates when it opens the state.`,
};

/** True when argv asks for help (`--help` or `-h` anywhere). */
export const wantsHelp = (argv: readonly string[]): boolean => argv.includes('--help') || argv.includes('-h');
