import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';

// The official scenarios need the conformance CLI and Node >= 22, installed outside the project (bench/mcp-conformance.ts
// says how). Without them this file skips; test/rest/http-edge-cases.test.ts covers the same protection on every run.
const dir = process.env.SVC_CONFORMANCE_DIR;
const SCRIPT = fileURLToPath(new URL('../../bench/mcp-conformance.ts', import.meta.url));
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const skip = dir ? false : 'SVC_CONFORMANCE_DIR not set';

function conformance(scenarios: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT, ...scenarios], {
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
}

t.test('issue 12 item 1: MCP conformance scenario dns-rebinding-protection', { skip }, async (t) => {
  const { code, out } = await conformance([]);
  t.equal(code, 0, out);
  t.match(out, /Passed: 2\/2, 0 failed/);
});

// The scenarios a tools-only server answers (the others need the conformance suite's own test tools, prompts,
// resources or logging).
t.test('MCP conformance scenarios server-initialize, ping and tools-list', { skip }, async (t) => {
  const { code, out } = await conformance(['server-initialize', 'ping', 'tools-list']);
  t.equal(code, 0, out);
  t.equal(out.match(/Passed: 1\/1, 0 failed/g)?.length, 3, out);
});
