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
