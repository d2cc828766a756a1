/** Loopback ports for servers the test harness starts (PostgreSQL, SeaweedFS). */
import { createServer } from 'node:net';

/** A port free on 127.0.0.1 right now (the probe releases it, so a racing process could still take it). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => (typeof a === 'object' && a ? resolve(a.port) : reject(new Error('no port'))));
    });
  });
}

/** Distinct free ports (the probe releases each one, so ask for all of them before any is used). */
export async function freePorts(n: number): Promise<number[]> {
  const out = new Set<number>();
  while (out.size < n) out.add(await freePort());
  return [...out];
}
