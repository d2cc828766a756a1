import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { getPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { ConfigError, loadConfig } from '../../config.js';
import { createLogger } from '../../logger.js';
import { createServices } from '../../main.js';
import { createHashingEmbedder } from '../../index/serving/embedder.js';
import { makePage } from '../helpers/page-input.js';
import { INDEX_THREAD_NAMES, IndexThreadPriority } from '../../index/serving/thread-priority.js';

const linux = existsSync('/proc/self/task');

/** Nice value of every thread of this process, by thread name. */
function threadNice(): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const tid of readdirSync('/proc/self/task').map(Number)) {
    try {
      const name = readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim();
      const list = out.get(name) ?? [];
      list.push(getPriority(tid));
      out.set(name, list);
    } catch {
      // ended meanwhile
    }
  }
  return out;
}

function indexThreads(m: Map<string, number[]>): number[] {
  return [...INDEX_THREAD_NAMES].flatMap((n) => m.get(n) ?? []);
}

function otherThreads(m: Map<string, number[]>): number[] {
  return [...m].filter(([n]) => !INDEX_THREAD_NAMES.has(n)).flatMap(([, v]) => v);
}

t.test('the nice value is bounded like setpriority(2) and read from SVC_INDEX_THREAD_NICE', async (t) => {
  for (const bad of [-1, 20, 1.5, Number.NaN]) t.throws(() => new IndexThreadPriority(bad), RangeError, String(bad));
  t.equal(loadConfig({ env: {} }).indexThreadNice, 10, 'default 10');
  t.equal(loadConfig({ env: { SVC_INDEX_THREAD_NICE: '0' } }).indexThreadNice, 0);
  t.throws(() => loadConfig({ env: { SVC_INDEX_THREAD_NICE: '20' } }), ConfigError);
});

// The order matters: a thread once lowered cannot be raised back without privilege, so the case that must leave the
// threads alone runs first, in this process, and the one that lowers them after.
t.test('svc serve lowers LanceDB threads only (issue 14 item 5)', { skip: linux ? false : 'Linux only' }, async (t) => {
  const serve = async (env: NodeJS.ProcessEnv) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-nice-'));
    const config = loadConfig({ env: { ...env, SVC_DATA_DIR: dataDir, SVC_CRAWL: 'false', SVC_SEARCH_THREADS: '0' } });
    const services = await createServices(config, { log: createLogger({ level: 'silent' }), embedder: createHashingEmbedder() });
    const { index } = services.deps;
    await index.upsertPage(makePage(1, 'a.example', ['threads yield to requests']));
    await index.optimize();
    services.start();
    return {
      services,
      close: async () => {
        await services.close();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  };

  const off = await serve({ SVC_INDEX_THREAD_NICE: '0' });
  let m = threadNice();
  t.ok(indexThreads(m).length > 0, `LanceDB threads exist (${[...m.keys()].join(', ')})`);
  t.same(new Set(indexThreads(m)), new Set([0]), 'SVC_INDEX_THREAD_NICE=0: every LanceDB thread at nice 0');
  await off.close();

  const on = await serve({});
  // Within a scan's interval (1 s): a thread a pool starts after a scan, from one of Node's threads, runs at its
  // creator's nice until the next scan finds it.
  const until = Date.now() + 3000;
  m = threadNice();
  while (indexThreads(m).some((n) => n !== 10) && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 100));
    m = threadNice();
  }
  t.same(new Set(indexThreads(m)), new Set([10]), 'default: every LanceDB thread at nice 10');
  t.same(new Set(otherThreads(m)), new Set([0]), 'Node threads (the HTTP thread among them) untouched');
  t.equal(getPriority(process.pid), 0, 'the main thread (tid = pid) untouched');

  // Work that starts more threads: they inherit the value or the next scan finds them.
  await on.services.deps.index.upsertPage(makePage(2, 'b.example', ['more work on the index']));
  await on.services.deps.index.optimize();
  const again = new IndexThreadPriority(10);
  again.scan();
  t.same(new Set(indexThreads(threadNice())), new Set([10]), 'after more work: still every LanceDB thread at 10');
  t.equal(again.scan(), 0, 'a second scan has nothing to lower');
  await on.close();
});

t.test('scan is a no-op at nice 0', async (t) => {
  const p = new IndexThreadPriority(0);
  t.equal(p.scan(), 0);
  p.start().stop();
  t.equal(p.scan(), 0, 'started and stopped, still nothing to lower');
});
