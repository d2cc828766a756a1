/**
 * Main-text failure classes found on the real page sets in ../shared/data/web (bench/extract-quality.ts), each
 * as a small excerpt of the real markup, asserted by the text kept and the text dropped.
 */
import t from 'tap';
import { decodeHtml, extractPage } from '../../crawler/extract.js';

const URL = 'https://example.org/news/1';
const nav = Array.from(
  { length: 12 },
  (_, i) => `<li><a href="/noticias.php?y=2005&amp;m=${i + 1}">Mês ${i + 1} <span>(${i * 3})</span></a></li>`,
).join('');

t.test('article text written straight into a wrapper between <br>s (no <p>) is the content', async (t) => {
  // Excerpt of a municipal news page: the article is text nodes of a column div, after a title <p> and a byline.
  const body = `<div class="row"><div class="col-md-3"><ul class="tree">${nav}</ul></div>
    <div class="col-md-9"><p class="titulo">Atendimento Domiciliar registra arrombamento em veículos</p>
    <small class="text-muted"><b>05/10/2018</b> - Publicado por: Clarissa Borba</small><br><br>
    A equipe do Serviço de Atendimento Domiciliar (SAD), do bairro Amizade, registrou nesta manhã o arrombamento de dois dos cinco automóveis da unidade. Os veículos estavam sem as respectivas baterias e com marcas de depredação.<br><br>
    Foi feito boletim de ocorrência e a polícia foi até o local para averiguar, e a Secretaria de Saúde, com o apoio da Guarda Municipal, vai reforçar a vigilância.<br><br></div></div>
    <div class="rodape"><div class="container"><div class="row"><div class="col-lg-12"><div style="text-align: center;">Jaraguá do Sul - SC - CNPJ: 83.102.459/0001-23 - Rua Walter Marquardt, 1111 - Barra do Rio Molha - 89259-565 - Caixa Postal 421 - Fone: (047) 2106-8000</div></div></div></div></div>`;
  const p = extractPage(`<html><body>${body}</body></html>`, { url: URL });
  t.match(p.mainText, /A equipe do Serviço de Atendimento Domiciliar/);
  t.match(p.mainText, /Foi feito boletim de ocorrência/);
  t.notMatch(p.mainText, /CNPJ/);
  t.notMatch(p.mainText, /Mês 3/);
});

t.test('a page whose only text is a link or headings keeps it', async (t) => {
  // readability's js-link-replacement and lazy-image-3 test pages.
  const linked = extractPage('<html><body><a href="javascript:"><p>abc</p><p>def</p>ghi</a></body></html>', { url: URL });
  t.equal(linked.mainText.replace(/\s+/g, ' '), 'abc def ghi');
  const headings = extractPage(
    '<html><body><article><h2>Test Case 1</h2><img src="a.jpg"><h2>Test Case 2</h2><img src="b.png"></article></body></html>',
    {
      url: URL,
    },
  );
  t.equal(headings.mainText.replace(/\s+/g, ' '), 'Test Case 1 Test Case 2');
});

t.test('decodeHtml: a body that is valid UTF-8 is read as UTF-8 despite a legacy meta charset', async (t) => {
  const html = '<meta http-equiv="Content-Type" content="text/html; charset=gb2312" /><p>腾讯新闻</p>';
  t.equal(decodeHtml(Buffer.from(html, 'utf8')), html);
  // Bytes that are not UTF-8 keep the declared legacy charset; the header still wins over everything.
  const latin1 = Buffer.concat([Buffer.from('<meta charset="windows-1252"><p>caf'), Buffer.from([0xe9]), Buffer.from('</p>')]);
  t.equal(decodeHtml(latin1), '<meta charset="windows-1252"><p>café</p>');
  t.equal(decodeHtml(Buffer.from('<p>é</p>', 'utf8'), 'text/html; charset=ISO-8859-1'), '<p>Ã©</p>');
});

const prose = (topic: string, n = 3) =>
  Array.from(
    { length: n },
    (_, i) =>
      `<p>Paragraph ${i} about ${topic}, with enough words, clauses, and commas to read as the article's own prose, not furniture.</p>`,
  ).join('');

t.test('a comment thread larger than the article is dropped, the article kept', async (t) => {
  // Shape of a recipe blog: a short post, then a comments area (id="comments" class="comments-area") far longer.
  const comments = Array.from(
    { length: 12 },
    (_, i) =>
      `<div class="wpd-thread-item"><div class="wpd-thread-text"><p>Liebe Kathrin, ich habe das Rezept ${i} direkt nachgebacken, wirklich super schnell, einfach, lecker, und meine Freunde, Nachbarn und Kollegen fanden ihn auch gut.</p></div></div>`,
  ).join('');
  const html = `<html><body><div class="site-inner"><div class="content-sidebar-wrap"><main class="content"><article class="post">
    <h1>Saftiger Zitronenkuchen vom Blech</h1>${prose('einen echten Klassiker aus der Backstube')}</article>
    <div id="comments" class="comments-area"><h3>63 Kommentar Themen</h3>${comments}</div></main></div></div></body></html>`;
  const p = extractPage(html, { url: URL });
  t.match(p.mainText, /einen echten Klassiker aus der Backstube/);
  t.notMatch(p.mainText, /Liebe Kathrin/);
  t.notMatch(p.mainText, /Kommentar Themen/);
});

t.test('teaser cards for other stories (linked headings with a one-line dek) are dropped inside the content', async (t) => {
  // Excerpt of a car-news article: "next news" cards sit in the article column after the story.
  const card = (title: string, dek: string) =>
    `<div class="cell row-desc"><a href="/news/${title.length}.html"><h5 class="row-title">${title}</h5></a><p class="row-excerpt">${dek}</p><label class="row-info">Marcus De Guzman</label></div>`;
  const html = `<html><body><div class="grid"><div class="cell article-main"><h1>Lexus wants you to go topless</h1>
    <h2>The convertible arrives next year</h2>${prose('the LC Convertible Concept', 4)}
    ${card('2020 Mini JCW GP is a 300HP monster hatch', 'The most powerful Mini hot hatch to come out of Oxford has 306 HP and a huge rear wing')}
    ${card('Audi e-Tron Sportback makes electric crossovers look good', 'Audi’s second electric vehicle – the E-Tron Sportback – officially debuts')}
    ${card('2020 Ford Ranger FX4: coming soon to PH?', 'Like the previous model, the new Ford Ranger FX4 is two-wheel drive only')}
    </div></div></body></html>`;
  const p = extractPage(html, { url: URL });
  t.match(p.mainText, /the LC Convertible Concept/);
  t.match(p.mainText, /The convertible arrives next year/);
  t.notMatch(p.mainText, /monster hatch|huge rear wing|Sportback|two-wheel drive/);
});

t.test('the extraction report says how much text was kept and why a page yielded little', async (t) => {
  const article = extractPage(`<html><body><nav><a href="/">Home</a></nav><article>${prose('the library', 4)}</article></body></html>`, {
    url: URL,
  });
  t.equal(article.extraction.verdict, 'ok');
  t.equal(
    article.extraction.keptChars,
    article.blocks.reduce((n, b) => n + b.text.length, 0),
  );
  t.ok(article.extraction.pageChars > article.extraction.keptChars);
  // A client-rendered shell: an empty root element and a bundle.
  const spa = extractPage(
    `<html><head><script type="application/ld+json">{"@type":"WebSite"}</script></head><body><div id="root"></div><noscript>You need to enable JavaScript to run this app.</noscript><script src="/static/js/main.4f2a.js"></script></body></html>`,
    { url: URL },
  );
  t.same(spa.extraction, { pageChars: 0, keptChars: 0, verdict: 'script_rendered' });
  // Plenty of text, all of it link lists and footer.
  const links = Array.from({ length: 60 }, (_, i) => `<li><a href="/c/${i}">Category number ${i}</a></li>`).join('');
  const furniture = extractPage(
    `<html><body><div class="menu-list"><ul>${links}</ul></div><footer>© Example 2026</footer></body></html>`,
    {
      url: URL,
    },
  );
  t.equal(furniture.extraction.keptChars, 0);
  t.equal(furniture.extraction.verdict, 'mostly_boilerplate');
  const stub = extractPage('<html><body><main><h1>Coming soon</h1><p>Subscribe to read the full story.</p></main></body></html>', {
    url: URL,
  });
  t.equal(stub.extraction.verdict, 'short_text');
  t.equal(extractPage('<html><body></body></html>', { url: URL }).extraction.verdict, 'empty');
});
