import t from 'tap';
import { LoopBudget, yieldToLoop } from '../event-loop.js';

/** Busy-waits `ms` (a stand-in for synchronous work). */
function spin(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

t.test('paused loops resume one per turn, in the order they paused, and every loop advances', async (t) => {
  const order: string[] = [];
  // A timer stands for the requests the loop serves: it fires between the slices, not after the loops end.
  let ticks = 0;
  const timer = setInterval(() => ticks++, 0);
  const loop = async (name: string, items: number) => {
    const budget = new LoopBudget(2);
    for (let i = 0; i < items; i++) {
      spin(1);
      order.push(name);
      await budget.tick();
    }
  };
  const started = performance.now();
  await Promise.all([loop('a', 20), loop('b', 20), loop('c', 20)]);
  clearInterval(timer);
  const elapsed = performance.now() - started;
  t.equal(order.length, 60);
  // Round robin: after the first slices, no loop runs two slices in a row while the others wait.
  const slices = order.filter((n, i) => i === 0 || order[i - 1] !== n);
  t.ok(slices.length >= 20, `the loops alternate (${slices.length} slices)`);
  for (const name of ['a', 'b', 'c']) {
    const firstEnd = order.lastIndexOf(name);
    t.ok(firstEnd >= 50, `${name} finishes near the end, not first (last item at ${firstEnd})`);
  }
  t.ok(ticks >= 5, `the timer fired between slices (${ticks} times in ${elapsed.toFixed(0)} ms)`);
});

t.test('a budget is due only after its slice; pause starts a new slice', async (t) => {
  const budget = new LoopBudget(5);
  t.notOk(budget.due());
  spin(6);
  t.ok(budget.due());
  await budget.pause();
  t.notOk(budget.due());
  await budget.tick(); // not due: no pause
  t.notOk(budget.due());
});

t.test('yieldToLoop lets I/O callbacks and timers run before it resolves', async (t) => {
  let fired = false;
  setTimeout(() => (fired = true), 0);
  spin(2); // the timer is due before the yield
  await yieldToLoop();
  await yieldToLoop();
  t.ok(fired);
});
