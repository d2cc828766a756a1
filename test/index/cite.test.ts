import t from 'tap';
import { MAX_CITE_TITLE_CHARS, formatCite, formatCiteDate } from '../../index/retrieval/cite.js';

t.test('issue 4: cite is "title — host — YYYY-MM-DD"', async (t) => {
  t.equal(
    formatCite({ title: 'Budget 2024', host: 'www.canada.ca', date: '2024-04-16T12:00:00Z' }),
    'Budget 2024 — www.canada.ca — 2024-04-16',
  );
  t.equal(
    formatCite({ title: 'Budget', host: 'WWW.Canada.CA', date: new Date('2023-01-02T23:59:59Z') }),
    'Budget — www.canada.ca — 2023-01-02',
  );
  t.equal(formatCite({ title: 'A', host: 'h.example', date: '2021-07-01' }), 'A — h.example — 2021-07-01', 'a plain date is kept');
  // An offset date-time is reported in UTC.
  t.equal(formatCite({ title: 'A', host: 'h.example', date: '2021-07-01T23:30:00-05:00' }), 'A — h.example — 2021-07-02');
});

t.test('missing parts are dropped', async (t) => {
  t.equal(formatCite({ title: 'Only title' }), 'Only title');
  t.equal(formatCite({ host: 'h.example' }), 'h.example');
  t.equal(formatCite({ title: '', host: 'h.example', date: null }), 'h.example');
  t.equal(formatCite({ title: '  ', host: 'h.example', date: 'not a date' }), 'h.example', 'invalid date dropped');
  t.equal(formatCite({ title: null, host: null, date: '2020-02-03' }), '2020-02-03');
  t.equal(formatCite({}), '');
  t.equal(formatCiteDate(undefined), '');
  t.equal(formatCiteDate(new Date(Number.NaN)), '');
});

t.test('title is cleaned and trimmed to a sane length at a word boundary', async (t) => {
  t.equal(formatCite({ title: '  Multi\n  line\ttitle ', host: 'h.example' }), 'Multi line title — h.example');
  const long = 'word '.repeat(60).trim();
  const cite = formatCite({ title: long, host: 'h.example', date: '2020-01-01' });
  const [title, host, date] = cite.split(' — ');
  t.ok(title !== undefined && title.length <= MAX_CITE_TITLE_CHARS, `title length ${title?.length}`);
  t.ok(title?.endsWith('word…'), 'cut after a whole word, with an ellipsis');
  t.equal(host, 'h.example');
  t.equal(date, '2020-01-01');
  // One giant word: cut inside it, never splitting a surrogate pair.
  const emoji = formatCite({ title: '😀'.repeat(200) });
  t.ok(Array.from(emoji).length <= MAX_CITE_TITLE_CHARS);
  t.notOk(/[\ud800-\udbff](?![\udc00-\udfff])/u.test(emoji));
});
