import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { createServices, startServer } from '../main.js';
import type { CliIo } from './io.js';

/** `svc serve [--data-dir D] [--host H] [--port P] [--no-crawl]`: HTTP (REST, /mcp, pages), crawler, indexer. */
export async function serveCommand(argv: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      'data-dir': { type: 'string' },
      host: { type: 'string' },
      port: { type: 'string' },
      'no-crawl': { type: 'boolean' },
      'allow-loopback': { type: 'boolean' },
      resolve: { type: 'string', multiple: true },
    },
  });
  const config = loadConfig({
    env: io.env,
    flags: {
      dataDir: values['data-dir'],
      host: values.host,
      port: values.port,
      crawl: values['no-crawl'] ? false : undefined,
      crawlAllowLoopback: values['allow-loopback'] ? true : undefined,
      resolve: values.resolve,
    },
  });
  const services = await createServices(config);
  const running = await startServer(services);
  services.start();
  const log = services.deps.log;
  log.info({ url: running.url, data_dir: config.dataDir }, 'svc listening');
  io.stdout.write(`svc listening on ${running.url} (data in ${config.dataDir}; crawler ${services.crawler ? 'on' : 'off'})\n`);
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      log.info({ signal }, 'shutting down');
      void running
        .close()
        .then(() => services.close())
        .then(resolve, resolve);
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  return 0;
}
