import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';

// The official scenario needs the conformance CLI and Node >= 22, installed outside the project (bench/mcp-conformance.ts
// says how). Without them this file skips; test/rest/http-edge-cases.test.ts covers the same protection on every run.
const dir = process.env.SVC_CONFORMANCE_DIR;
const SCRIPT = fileURLToPath(new URL('../../bench/mcp-conformance.ts', import.meta.url));
const REPO = fileURLToPath(new URL('../../', import.meta.url));

t.test(
  'issue 12 item 1: MCP conformance scenario dns-rebinding-protection',
  { skip: dir ? false : 'SVC_CONFORMANCE_DIR not set' },
  async (t) => {
    const { code, out } = await new Promise<{ code: number; out: string }>((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT], {
        cwd: REPO,
        env: process.env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
      child.stderr.on('data', (c: Buffer) => (out += c.toString('utf8')));
      child.on('error', reject);
      child.on('close', (c) => resolve({ code: c ?? 1, out }));
    });
    t.equal(code, 0, out);
    t.match(out, /Passed: 2\/2, 0 failed/);
  },
);
