import t from 'tap';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { parse } from 'node-html-parser';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { MAX_CHARS_PER_TOKEN, estimateTokens, estimateTokensIncremental, truncateToTokens } from '../../index/retrieval/tokens.js';

// Real text, read in place from ../shared (never copied into the repo).
const shared = fileURLToPath(new URL('../../../shared/data/', import.meta.url));

/** SciFact passages (title + abstract), a slice the price tables were not fitted on (they used docs 0–2499). */
function sciFact(from: number, count: number): string[] {
  const lines = gunzipSync(readFileSync(`${shared}beir/scifact/corpus.jsonl.gz`))
    .toString('utf8')
    .split('\n');
  return lines
    .filter((l) => l.trim() !== '')
    .slice(from, from + count)
    .map((l) => {
      const doc = JSON.parse(l) as { title: string; text: string };
      return `${doc.title}\n${doc.text}`;
    });
}

/**
 * Paragraphs (> 80 chars) of the trafilatura eval pages whose <html lang> starts with `lang`. `parity` keeps every
 * other page (0: even, 1: odd) — the French and English-web price tables were fitted on the even pages only.
 */
function webParagraphs(lang: string, parity?: 0 | 1): string[] {
  const base = `${shared}web/trafilatura-eval/`;
  const out: string[] = [];
  let k = 0;
  for (const line of readFileSync(`${base}ground-truth.jsonl`, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    const row = JSON.parse(line) as { html_lang_attr: string; html_path: string };
    if (!row.html_lang_attr.startsWith(lang)) continue;
    if (parity !== undefined && k++ % 2 !== parity) continue;
    const root = parse(gunzipSync(readFileSync(`${base}${row.html_path}`)).toString('utf8'));
    for (const p of root.querySelectorAll('p')) {
      const text = p.textContent.replace(/\s+/gu, ' ').trim();
      if (text.length > 80) out.push(text);
    }
  }
  return out;
}

function meanAbsRelError(texts: readonly string[]): number {
  let sum = 0;
  for (const text of texts) {
    const real = countTokens(text);
    sum += Math.abs(estimateTokens(text) - real) / real;
  }
  return sum / texts.length;
}

t.test('issue 4: English estimate within 10% MAE of o200k on SciFact passages', async (t) => {
  const texts = sciFact(2500, 1200);
  t.equal(texts.length, 1200);
  const mae = meanAbsRelError(texts);
  t.comment(`English (SciFact, ${texts.length} passages) MAE = ${(mae * 100).toFixed(2)}%`);
  t.ok(mae < 0.1, `MAE ${mae} < 0.10`);
});

t.test('issue 4: French estimate within 10% MAE of o200k on French web pages', async (t) => {
  const texts = webParagraphs('fr');
  t.ok(texts.length >= 200, `enough French paragraphs (${texts.length})`);
  const mae = meanAbsRelError(texts);
  t.comment(`French (trafilatura fr pages, ${texts.length} paragraphs) MAE = ${(mae * 100).toFixed(2)}%`);
  t.ok(mae < 0.1, `MAE ${mae} < 0.10`);
  const heldOut = webParagraphs('fr', 1);
  const maeHeldOut = meanAbsRelError(heldOut);
  t.comment(`French held-out pages only (${heldOut.length} paragraphs) MAE = ${(maeHeldOut * 100).toFixed(2)}%`);
  t.ok(maeHeldOut < 0.1, `held-out MAE ${maeHeldOut} < 0.10`);
});

t.test('English web pages (held out) are within 10% too', async (t) => {
  const texts = webParagraphs('en', 1);
  t.ok(texts.length >= 500, `enough English paragraphs (${texts.length})`);
  const mae = meanAbsRelError(texts);
  t.comment(`English web (trafilatura en pages, held out, ${texts.length} paragraphs) MAE = ${(mae * 100).toFixed(2)}%`);
  t.ok(mae < 0.1, `MAE ${mae} < 0.10`);
});

t.test('estimateTokens basics', async (t) => {
  t.equal(estimateTokens(''), 0);
  t.equal(estimateTokens('a'), 1);
  t.equal(estimateTokens(' '), 1);
  t.equal(estimateTokens('hello world'), countTokens('hello world'));
  // Long digit strings go in groups of three, like o200k.
  t.equal(estimateTokens('123456789'), countTokens('123456789'));
  // CJK and Cyrillic are priced (not counted as one giant word).
  t.ok(estimateTokens('日本語のテキストです') >= 5);
  t.ok(estimateTokens('Привет, как дела у тебя сегодня?') >= 6);
  // Monotone in repetition: more text never costs less.
  t.ok(estimateTokens('word '.repeat(100)) > estimateTokens('word '.repeat(50)));
});

t.test('truncateToTokens', async (t) => {
  const text = 'The first sentence is short. The second sentence is a little longer than the first one. A third follows here.';
  t.equal(truncateToTokens(text, 1000), text, 'fits: unchanged');
  t.equal(truncateToTokens(text, 0), '');
  t.equal(truncateToTokens(text, -5), '');
  t.equal(truncateToTokens(text, Number.NaN), '');
  const cut = truncateToTokens(text, 12);
  t.ok(text.startsWith(cut), 'a prefix');
  t.ok(estimateTokens(cut) <= 12);
  t.equal(cut, 'The first sentence is short.', 'cut at the sentence end');
  const words = truncateToTokens('alpha beta gamma delta epsilon zeta eta theta iota kappa', 4);
  t.ok(estimateTokens(words) <= 4);
  t.match(words, /^alpha( \w+)*$/u, 'whole words only');
  t.notMatch(words, /\s$/u, 'no trailing whitespace');
  // One giant "word" (no boundary): hard cut, still within budget and never splitting a surrogate pair.
  const giant = '😀'.repeat(500);
  const g = truncateToTokens(giant, 10);
  t.ok(g.length > 0 && giant.startsWith(g) && estimateTokens(g) <= 10);
  t.notOk(/[\ud800-\udbff]$/u.test(g), 'no lone high surrogate at the end');
});

t.test('truncateToTokens properties: a prefix within budget, unchanged when it fits', async (t) => {
  const run = fc.check(
    fc.property(fc.string({ unit: 'grapheme', maxLength: 400 }), fc.integer({ min: 1, max: 80 }), (s, max) => {
      const out = truncateToTokens(s, max);
      if (!s.startsWith(out)) return false;
      if (estimateTokens(out) > max) return false;
      if (estimateTokens(s) <= max && out !== s) return false;
      return true;
    }),
    { numRuns: 400 },
  );
  t.notOk(run.failed, fc.defaultReportMessage(run) ?? 'property holds');
});

t.test('incremental estimate equals the full estimate of the longer text', async (t) => {
  const piece = fc.oneof(
    fc.string({ unit: 'grapheme', maxLength: 40 }),
    fc.constantFrom('\n\n', '  ', '. ', 'word', 'Québec', '2019', '...', "it's", '😀', ' (x)', 'camelCase', '\t', 'ÉTÉ'),
  );
  const run = fc.check(
    fc.property(fc.array(piece, { minLength: 1, maxLength: 12 }), (parts) => {
      let text = '';
      let state = estimateTokensIncremental('').state;
      for (const p of parts) {
        text += p;
        const r = estimateTokensIncremental(text, state);
        if (r.tokens !== estimateTokens(text)) return false;
        state = r.state;
      }
      return true;
    }),
    { numRuns: 500 },
  );
  t.notOk(run.failed, fc.defaultReportMessage(run) ?? 'property holds');
  const a = 'The first passage ends here.';
  const b = `${a}\n\nThe second one follows.`;
  t.equal(estimateTokensIncremental(b, estimateTokensIncremental(a).state).tokens, estimateTokens(b));
});

t.test('no text is priced below one token per MAX_CHARS_PER_TOKEN characters (the packer relies on it)', async (t) => {
  const chunk = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 60 }),
    fc.constantFrom(' ', '\n', '\t', '-', '=', '.', '/', '\u0301', '😀', 'a', 'É', '1'),
  );
  const text = fc
    .array(fc.tuple(chunk, fc.integer({ min: 1, max: 80 })), { maxLength: 8 })
    .map((parts) => parts.map(([c, n]) => c.repeat(n)).join(''));
  const run = fc.check(
    fc.property(text, (s) => MAX_CHARS_PER_TOKEN * estimateTokens(s) + MAX_CHARS_PER_TOKEN / 2 >= s.length),
    { numRuns: 2000 },
  );
  t.notOk(run.failed, fc.defaultReportMessage(run) ?? 'property holds');
  t.ok(MAX_CHARS_PER_TOKEN * estimateTokens(' '.repeat(5000)) + 12 >= 5000);
  t.ok(MAX_CHARS_PER_TOKEN * estimateTokens('-'.repeat(5000)) + 12 >= 5000);
  t.ok(MAX_CHARS_PER_TOKEN * estimateTokens(`.${'\n'.repeat(5000)}`) + 12 >= 5001);
});

t.test('symbol runs, emoji and decomposed accents are priced like o200k, roughly', async (t) => {
  for (const s of ['-'.repeat(20), '='.repeat(40), '😀😀😀😀', 'e\u0301te\u0301', '~!@#$%^&*()']) {
    const real = countTokens(s);
    const est = estimateTokens(s);
    t.ok(Math.abs(est - real) <= Math.max(2, real * 0.5), `${JSON.stringify(s)}: estimated ${est}, o200k ${real}`);
  }
});
