/**
 * Progress off a terminal (cli/progress.ts): a line every `everyMs` with done, rate and time left, a summary at the end,
 * nothing on a terminal unless asked for a live line; and `svc crawl` with stdout piped printing such lines.
 */
import { join } from 'node:path';
import t from 'tap';
import { crawlCommand } from '../../cli/crawl.js';
import { formatSeconds, ProgressLines } from '../../cli/progress.js';
import { startTestWeb } from '../../fixtures/test-web/index.js';
import { captureStream } from '../helpers/capture-stream.js';

t.test('lines every everyMs off a terminal: done, rate, time left; then a summary', async (t) => {
  let now = 0;
  const out = captureStream(false);
  const p = new ProgressLines({
    io: { stdout: out.stream, stderr: out.stream, env: {} },
    label: 'job',
    unit: 'items',
    everyMs: 5000,
    now: () => now,
  });
  now = 1000;
  p.update(10, { total: 100 });
  t.equal(out.text(), '', 'nothing before everyMs has passed');
  now = 5000;
  p.update(50, { total: 100 });
  t.equal(out.text(), 'job: 50/100 items (50%), 10.0 items/s, 5 s left\n');
  now = 6000;
  p.update(60, { total: 100 });
  t.equal(out.text().split('\n').length, 2, 'one line per everyMs');
  now = 10_000;
  p.update(80, { fraction: 0.75, extra: 'indexed 3' });
  t.match(out.text(), /\njob: 80 items \(75%\), 8\.0 items\/s, 3 s left, indexed 3\n$/, 'a fraction gives the time left');
  now = 20_000;
  p.finish('finished', 200);
  t.match(out.text(), /\njob: finished, 200 items in 20 s, 10\.0 items\/s\n$/);
  t.notOk(out.text().includes('\r'));
});

t.test('a resumed count: the rate is of this run; unknown time left without a total or fraction', async (t) => {
  let now = 0;
  const out = captureStream(false);
  const p = new ProgressLines({
    io: { stdout: out.stream, stderr: out.stream, env: {} },
    label: 'r',
    unit: 'p',
    everyMs: 0,
    from: 100,
    now: () => now,
  });
  now = 2000;
  p.update(140, { total: 200 });
  p.update(150);
  t.same(out.text().split('\n').filter(Boolean), ['r: 140/200 p (70%), 20.0 p/s, 3 s left', 'r: 150 p, 25.0 p/s, unknown left']);
});

t.test('on a terminal: quiet by default, one line rewritten in place when live', async (t) => {
  let now = 0;
  const quiet = captureStream(true);
  const q = new ProgressLines({
    io: { stdout: quiet.stream, stderr: quiet.stream, env: {} },
    label: 'q',
    unit: 'x',
    everyMs: 0,
    now: () => now,
  });
  now = 1000;
  q.update(1);
  t.equal(quiet.text(), '', 'the command keeps its own line');
  now = 0;
  const live = captureStream(true);
  const l = new ProgressLines({
    io: { stdout: live.stream, stderr: live.stream, env: {} },
    label: 'l',
    unit: 'x',
    everyMs: 0,
    tty: 'live',
    now: () => now,
  });
  now = 2000;
  l.update(4, { total: 8 });
  l.finish('finished');
  t.equal(live.text(), '\r\u001b[2Kl: 4/8 x (50%), 2.0 x/s, 2 s left\r\u001b[2Kl: finished, 4 x in 2 s, 2.0 x/s\n');
});

t.test('durations', async (t) => {
  t.equal(formatSeconds(42.4), '42 s');
  t.equal(formatSeconds(185), '3 min 5 s');
  t.equal(formatSeconds(7800), '2 h 10 min');
  t.equal(formatSeconds(-3), '0 s');
});

t.test('svc crawl with stdout piped: progress lines, then its summary', async (t) => {
  const web = await startTestWeb({ generatedHosts: 2, generatedPages: 8 });
  t.teardown(() => web.close());
  const dir = t.testdir();
  const out = captureStream(false);
  const err = captureStream(false);
  const code = await crawlCommand(
    [
      '--seeds',
      web.url('gen-0.test', '/'),
      '--allow-loopback',
      '--data-dir',
      join(dir, 'data'),
      '--gap-ms',
      '20',
      '--max-pages',
      '5',
      '--stay-on-hosts',
      ...web.pins.flatMap((p) => ['--resolve', p]),
    ],
    { stdout: out.stream, stderr: err.stream, env: { SVC_PROGRESS_MS: '0' } },
  );
  t.equal(code, 0, err.text());
  const lines = out.text().split('\n');
  const progress = lines.filter((l) => l.startsWith('crawl: '));
  t.ok(progress.length > 0, 'progress lines while the crawl runs');
  for (const l of progress)
    t.match(l, /^crawl: \d+\/5 pages \(\d+%\), [\d.]+ pages\/s, (\d+ s|\d+ min \d+ s|unknown) left, indexed \d+, queued \d+, errors \d+$/);
  t.notOk(out.text().includes('\r'), 'no line rewritten in place off a terminal');
  t.match(out.text(), /crawl finished in [\d.]+ s\n {2}fetched +\d+\n {2}indexed +5\n/, 'the summary at the end');
});
