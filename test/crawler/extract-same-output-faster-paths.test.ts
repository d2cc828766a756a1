/**
 * The extractor's cheaper paths give the answers of the plain ones: text lengths counted without building the
 * squashed string, and parsing with the lower-cased document reused for every script, style, noscript and pre.
 */
import t from 'tap';
import { parse } from 'node-html-parser';
import { extractPage } from '../../crawler/extract.js';
import { squash, squashedLength } from '../../crawler/extract-text.js';

t.test('squashedLength is squash(s).length for every kind of space, invisible and ordinary character', async (t) => {
  const parts = [
    'a',
    'É',
    ' ',
    '\n',
    '\t',
    '\u00a0',
    '\u200b',
    '\u00ad',
    '\ufeff',
    '\u2060',
    '\u3000',
    '\u2028',
    '\u1680',
    '😀',
    '\u0085',
    '\u200c',
  ];
  let checked = 0;
  const wrong: string[] = [];
  for (const a of parts)
    for (const b of parts)
      for (const c of parts) {
        const s = `${a}${b}x${c}${a}`;
        if (squashedLength(s) !== squash(s).length) wrong.push(escape(s));
        checked++;
      }
  t.same(wrong, []);
  t.equal(checked, parts.length ** 3);
  t.equal(squashedLength(''), 0);
  t.equal(squashedLength(' \u00ad\u200b '), 0);
  t.equal(squashedLength(' a \u00a0 b\u00ad c '), 5);
});

t.test('a page with upper-case script and pre tags parses as without the reuse, and toLocaleLowerCase is restored', async (t) => {
  const original = String.prototype.toLocaleLowerCase;
  const prose = 'The council approved the new library budget on Tuesday, after a long debate about opening hours.';
  const html = `<html><body><SCRIPT>var a = "<p>not text</p>";</SCRIPT><article><h1>Library budget</h1>
    <p>${prose}</p><PRE>line one
line two</PRE><p>${prose} It opens in spring.</p><script>x("</div>")</Script><p>Tail.</p></article></body></html>`;
  const page = extractPage(html, { url: 'https://example.org/a' });
  t.equal(String.prototype.toLocaleLowerCase, original);
  t.notMatch(page.mainText, /not text/);
  t.match(page.mainText, /line one line two/);
  t.match(page.mainText, /It opens in spring\./);
  // The parser's own answer for the same markup: the pre and the scripts end where it says they end.
  const tree = parse(html, {
    lowerCaseTagName: true,
    comment: false,
    blockTextElements: { script: true, style: true, noscript: true, pre: true },
  });
  t.equal(tree.querySelectorAll('script').length, 2);
  t.equal(tree.querySelector('pre')?.text, 'line one\nline two');
  t.equal('ÄB'.toLocaleLowerCase(), 'äb');
});
