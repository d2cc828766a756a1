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
  await new Promise((r) => setTimeout(r, 1)); // a turn on: the window of the test before has closed
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

t.test('loops that start in the same turn share one slice: a turn carries at most two slices of budgeted work', async (t) => {
  // Ten loops start in one phase of a turn, each in its own callback, as sitemap fetches answered in one poll phase
  // do. With a fresh 5 ms budget each, that phase ran ten slices (≈ 50 items of 1 ms) before any timer; now they
  // share the turn's window.
  const sliceMs = 5;
  let sinceTick = 0;
  let mostBetweenTicks = 0;
  let ticks = 0;
  const timer = setInterval(() => {
    ticks++;
    sinceTick = 0;
  }, 0);
  await new Promise((r) => setTimeout(r, 2)); // the timer runs before the loops start
  const loop = async (items: number) => {
    const budget = new LoopBudget(sliceMs);
    for (let i = 0; i < items; i++) {
      await budget.tick();
      spin(1);
      mostBetweenTicks = Math.max(mostBetweenTicks, ++sinceTick);
    }
  };
  const loops = await new Promise<Promise<void>[]>((resolve) => {
    const started: Promise<void>[] = [];
    for (let i = 0; i < 10; i++)
      setImmediate(() => {
        started.push(loop(12));
        if (started.length === 10) resolve(started);
      });
  });
  await Promise.all(loops);
  clearInterval(timer);
  t.equal(loops.length, 10, 'every loop ends');
  // A window admits items while it has run for less than the slice: at most sliceMs + 1 items of 1 ms (a preempted
  // item only lowers the count). Two windows a turn (one phase's, the resumed loop's): at most 2 × 6 items.
  t.ok(mostBetweenTicks <= 2 * (sliceMs + 1), `at most two slices between two timer ticks (most items: ${mostBetweenTicks})`);
  t.ok(ticks >= 10, `the timer fired between slices (${ticks} times)`);
});
