/**
 * Runs official MCP conformance scenarios (@modelcontextprotocol/conformance; `dns-rebinding-protection`, or those
 * named as arguments) against a real svc on loopback. Not a benchmark: it lives here with the other hand-run scripts.
 *
 *   # once: the conformance CLI needs Node >= 22; npm's node@24 package provides one
 *   npm install --prefix /tmp/mcp-conformance @modelcontextprotocol/conformance@0.1.16 node@24
 *   SVC_CONFORMANCE_DIR=/tmp/mcp-conformance node --import tsx bench/mcp-conformance.ts
 *
 * The scenario targets unauthenticated localhost servers: its requests carry no credentials. svc's /mcp needs a
 * key, so a loopback proxy adds `Authorization: Bearer <a fresh key>` and forwards everything else verbatim (Host
 * and Origin included): the check under test, Host and Origin validation, is svc's own. Exit code 0 = every scenario
 * passed; their reports are printed. test/rest/mcp-conformance.test.ts runs this when SVC_CONFORMANCE_DIR is set.
 */
import '../fixtures/loopback-only.js';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../config.js';
import { createLogger } from '../logger.js';
import { createServices, startServer } from '../main.js';
import { setLanceCpuThreads } from '../index/engines/lance/lance-threads.js';

setLanceCpuThreads(); // as svc's own entry does (cli/main.ts)

const dir = process.env.SVC_CONFORMANCE_DIR;
const cli = dir ? join(dir, 'node_modules/@modelcontextprotocol/conformance/dist/index.js') : '';
const node24 = dir ? join(dir, 'node_modules/.bin/node') : '';
if (!dir || !existsSync(cli) || !existsSync(node24)) {
  process.stderr.write(
    'set SVC_CONFORMANCE_DIR to a folder with @modelcontextprotocol/conformance and node@24 installed (see the header)\n',
  );
  process.exit(2);
}

const dataDir = mkdtempSync(join(tmpdir(), 'svc-conformance-'));
const config = loadConfig({ env: {}, flags: { dataDir, host: '127.0.0.1', port: 0, crawl: false, logLevel: 'warn' } });
const services = await createServices(config, { log: createLogger({ level: 'warn' }) });
const { key } = await services.keys.create({ name: 'conformance', perMinute: 1000, perDay: 100_000 });
const running = await startServer(services);
const target = new URL(running.url);

const proxy = createServer((req, res) => {
  const headers = { ...req.headers, authorization: `Bearer ${key}` };
  const up = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers }, (r) => {
    res.writeHead(r.statusCode ?? 502, r.headers);
    r.pipe(res);
  });
  up.on('error', () => res.destroy());
  req.pipe(up);
});
await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp`;

const scenarios = process.argv.slice(2);
let code = 0;
for (const scenario of scenarios.length > 0 ? scenarios : ['dns-rebinding-protection']) {
  const c = await new Promise<number>((resolve) => {
    const child = spawn(node24, [cli, 'server', '--url', url, '--scenario', scenario], { stdio: 'inherit' });
    child.on('close', (x) => resolve(x ?? 1));
  });
  code ||= c;
}
proxy.close();
await running.close();
await services.close();
rmSync(dataDir, { recursive: true, force: true });
process.exit(code);
