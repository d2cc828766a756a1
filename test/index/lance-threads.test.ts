/** Issue 13 (the house): the index never writes the process environment; svc's entry sets Lance's pool size. */
import t from 'tap';
import { main } from '../../cli/main.js';
import { lanceCpuThreads, setLanceCpuThreads } from '../../index/engines/lance/lance-threads.js';
import { PassageIndex } from '../../index/engines/lance/store.js';

t.test(
  'issue 13: PassageIndex.open leaves process.env alone; the svc entry and setLanceCpuThreads set it unless the operator did',
  async (t) => {
    const saved = process.env.LANCE_CPU_THREADS;
    t.teardown(() => {
      if (saved === undefined) delete process.env.LANCE_CPU_THREADS;
      else process.env.LANCE_CPU_THREADS = saved;
    });
    delete process.env.LANCE_CPU_THREADS;
    const idx = await PassageIndex.open({ dir: t.testdir(), embedder: null });
    await idx.close();
    t.equal(process.env.LANCE_CPU_THREADS, undefined, 'opening an index wrote nothing');

    const out: string[] = [];
    const io = { stdout: { write: (s: string) => (out.push(s), true) }, stderr: { write: (s: string) => (out.push(s), true) } };
    await main(['--help'], io as never);
    t.equal(process.env.LANCE_CPU_THREADS, lanceCpuThreads(), 'the svc entry set it');

    const env: NodeJS.ProcessEnv = { LANCE_CPU_THREADS: '3' };
    setLanceCpuThreads(env);
    t.equal(env.LANCE_CPU_THREADS, '3', "an operator's value wins");
    t.equal(lanceCpuThreads(2), '8');
    t.equal(lanceCpuThreads(16), '16');
  },
);
