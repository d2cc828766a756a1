/**
 * Main text: which block is the content, and what inside it is furniture. Each case is a small excerpt of a real
 * page from the sets in ../shared/data/web (the page is named in the case's comment), cut down to the markup that
 * carries the failure, and asserted by the text kept and the text dropped.
 */
import t from 'tap';
import { extractPage } from '../../crawler/extract.js';

const URL = 'https://example.org/post/1';
const text = (html: string): string => extractPage(html, { url: URL }).mainText.replace(/\s+/g, ' ');
const para = (topic: string, i: number): string =>
  `<p>Absatz ${i} über ${topic}, mit genug Wörtern, Nebensätzen, und Kommas, um als eigener Text des Beitrags zu gelten.</p>`;
const paras = (topic: string, n: number): string => Array.from({ length: n }, (_, i) => para(topic, i)).join('');
const sidebar = `<aside class="sidebar"><ul>${Array.from({ length: 8 }, (_, i) => `<li><a href="/c/${i}">Kategorie ${i}</a></li>`).join('')}</ul></aside>`;

t.test('a whole HTML document pasted into a post: the nested <body> does not stop the content at one block', async (t) => {
  // trafilatura-eval, backenmachtgluecklich.de (lemon cake): the post's entry-content holds <html><body> with the
  // intro, a recipe card and an FAQ box; only the FAQ was kept.
  const html = `<html><body><div class="site-inner"><main class="content"><article class="post">
    <div class="entry-content"><html><body>
      <p>Oft braucht es für den großen Genuss gar keine besonders raffinierte Torte, ein einfacher saftiger Zitronenkuchen tut es auch, einen echten Klassiker aus der Backstube.</p>
      <p>Das Rezept kursiert so oder so ähnlich wahrscheinlich in vielen Familien, was auch kein Wunder ist, denn es ist simpel, gelingsicher, schnell und lecker.</p>
      <div id="wprm-recipe-container" class="wprm-recipe-container"><div class="wprm-recipe">
        <ul class="wprm-recipe-ingredients"><li>6 mittelgroße Eier</li><li>300 g Butter</li></ul>
        <ul class="wprm-recipe-instructions"><li><div class="wprm-recipe-instruction-text">Rührteig auf dem Blech verteilen und bei 180 Grad etwa 25 Minuten backen.</div></li></ul>
      </div></div>
      <div id="bmg_faq" class="bmg-faq bmg-content-box"><div class="bmg-content-box--content">
        <h3>Was macht Zitronenkuchen saftig?</h3>
        <p>Bei diesem klassischen Rezept ist es die Kombination der Zutaten, und deren Verhältnis zueinander, durch die vergleichsweise große Menge Eier und Butter sowie den Saft.</p>
        <h3>Wann kommt der Zuckerguss auf den Teig?</h3>
        <p>Sobald der Kuchen gebacken und abgekühlt ist, könnt ihr ihn bestreichen, am besten mit einem breiten Pinsel, gleichmäßig und dünn.</p>
      </div></div>
    </body></html></div></article></main>${sidebar}</div></body></html>`;
  const kept = text(html);
  t.match(kept, 'einen echten Klassiker aus der Backstube');
  t.match(kept, '6 mittelgroße Eier');
  t.match(kept, 'Rührteig auf dem Blech verteilen');
  t.match(kept, 'Sobald der Kuchen gebacken');
  t.notMatch(kept, 'Kategorie 3');
});

t.test('an unclosed <a> that swallows the following paragraphs does not make the article a link list', async (t) => {
  // trafilatura-eval, pinup-fashion.de (corsets): a bold link in the intro is never closed, so the parser nests
  // every later paragraph inside it; all the article's text counted as link text and was dropped.
  const html = `<html><body><div id="content"><div id="main"><div class="center-col"><div class="item-post">
    <h2>Korsetts – Shops, Designer, online kaufen</h2>
    <p><em>Korsetts</em> sind für Pin Up Girls so etwas wie Wasser für Delphine: Ohne geht es nur ganz kurz. Egal ob man es als Dessous trägt oder ein Outfit daraus zaubert.</p>
    <p><b><a href="/category/korsetts/"><u>Alle Shops im Bereich Korsetts</a></u></b></br></br></p>
    <p>Viele der heutigen Korsetts werden noch immer nach traditioneller Weise hergestellt. Die eingenähten Metallstäbe sorgen für festen Halt, die Schnürung am Rücken für eine schmale Taille.
    <p>Doch was macht den Unterschied beim Korsettkauf aus? Natürlich sind nicht alle <a href="/category/korsetts/">Korsetts</a> gleich, die Schnürung, der Stoff, die Stäbe, und wie gut das Teil sitzt.
    <p>Wem <a href="/shapewear/">Shapewear</a> ab sofort nicht edel genug ist, der greift zum Korsett, das die Taille formt, den Rücken stützt, und dabei auch noch wunderschön aussieht.
    </div></div><div class="right-col"><div class="item-right widget_text"><div class="textwidget">Du suchst Rockabilly Kleider? Viel Spaß beim Stöbern.</div></div></div></div></div></body></html>`;
  const kept = text(html);
  t.match(kept, 'Korsetts sind für Pin Up Girls');
  t.match(kept, 'Doch was macht den Unterschied beim Korsettkauf');
  t.match(kept, 'Wem Shapewear ab sofort nicht edel');
  t.notMatch(kept, 'Viel Spaß beim Stöbern');
});

t.test('a one-line teaser box whose class says "text" does not outrank the article; text inside links scores nothing', async (t) => {
  // trafilatura-eval, kochbar.de (cutting tomatoes): a side rail of linked teaser cards ("…-textbox") and a
  // headline box ("…-headline-text") won over the tip's steps; the page came out as "Die besten TIPPS".
  const card = (i: number): string =>
    `<div class="kb-module-teaser-single"><a class="kb-nostyle-link" href="/tipp/${i}"><div class="kb-module-teaser-single-textbox">Tipp ${i}: So gelingt der perfekte Kuchen jedes Mal</div></a></div>`;
  const html = `<html><body><div class="tips"><div class="row">
    <div class="rtli-large-4"><div class="kb-tip-side-teaser-wrapper">${[1, 2].map(card).join('')}</div></div>
    <div class="rtli-large-8"><div class="kb-width-100">
      <div class="kb-tip-step"><div class="kb-tip-steps-right-var kb-fs-16">Ihr kennt es sicher auch!<br>Ihr möchtet Tomaten in Scheiben schneiden weil Ihr sie hübsch auf einem Teller anrichten möchtet und dann fallen die Kerne heraus.</div></div>
      <div class="kb-tip-step"><div class="kb-tip-steps-right-var kb-fs-16">Warum nur ist das so?<br>Das liegt ganz einfach daran dass die Tomate falsch auf dem Schneidbrett liegt mit dem Strunk nach oben statt zur Seite.</div></div>
      <div class="kb-tip-step"><div class="kb-tip-steps-right-var kb-fs-16">Legt die Tomate auf die Seite dann haften die Kerne am Fruchtfleisch und können nicht herausfallen aber ohne Strunk sieht es auch schöner aus.</div></div>
    </div></div></div></div>
    <div class="kb-module-headline"><div class="kb-module-headline-text">Die besten TIPPS der letzten Woche</div></div></body></html>`;
  const kept = text(html);
  t.match(kept, 'Ihr kennt es sicher auch!');
  t.match(kept, 'aber ohne Strunk sieht es auch schöner aus');
  t.notMatch(kept, 'So gelingt der perfekte Kuchen');
  t.notMatch(kept, 'Die besten TIPPS');
});

t.test('an article split into modules is read whole, not one module', async (t) => {
  // trafilatura-eval, smava.de (personal loan interest): a header module with the intro, content modules with
  // tables and sections, an image-and-text module; only the densest module was kept.
  const module = (id: number, kind: string, inner: string): string =>
    `<div id="module-${id}" class="container-fluid ${kind}-module"><div class="container"><div class="card"><div class="collapse show"><div class="card-body"><div class="row"><div class="col-lg-8 offset-lg-2"><div class="row"><div class="col-12 text">${inner}</div></div></div></div></div></div></div></div></div>`;
  const html = `<html><body><div class="page-wrapper">
    <div class="header"><a href="/">Start</a> <a href="/kredit">Zum Kreditvergleich</a></div>
    <div id="module-1" class="intro-module"><div class="text"><p>Welche Faktoren die Höhe Ihrer Privatkredit-Zinsen bestimmen, und wie die Berechnung Ihrer Privatkredit-Zinsen erfolgt, erfahren Sie hier.</p></div></div>
    ${module(2, 'content', paras('die Kredithöhe', 2))}
    ${module(3, 'fluid-image-text', `<table class="table"><tr><td>5.000 €</td><td>36 Monate</td><td>143,17 €</td></tr><tr><td>10.000 €</td><td>36 Monate</td><td>286,35 €</td></tr></table>`)}
    ${module(4, 'content', paras('die Bonität', 4))}
    ${module(5, 'multi-collapsibles', `<p><strong>Änderung der Zinshöhe bei Privatkrediten</strong></p>${paras('den Zinssatz', 3)}`)}
    </div><div class="footer-top"><div class="newsletter-text">Erhalten Sie kostenlos aktuelle Kredit-Tipps.</div></div></body></html>`;
  const kept = text(html);
  t.match(kept, 'wie die Berechnung Ihrer Privatkredit-Zinsen erfolgt');
  t.match(kept, '286,35 €');
  t.match(kept, 'Absatz 1 über die Kredithöhe');
  t.match(kept, 'Absatz 3 über die Bonität');
  t.match(kept, 'Absatz 2 über den Zinssatz');
  t.match(kept, 'Änderung der Zinshöhe bei Privatkrediten');
  t.notMatch(kept, 'Zum Kreditvergleich');
});

t.test('sentence-long list items are prose the content holds; a ticker of linked teasers is not', async (t) => {
  // readability-test-pages, firefox-nightly-blog: the post is lists of sentence-long items, with one <p> among
  // them; only that paragraph was kept.
  const item = (i: number): string =>
    `<li>We have just landed <a href="https://bugs.example.org/${i}">Bug ${i}</a>, which fixes the ${i}th thing that made the browser slower than it should have been on start-up.</li>`;
  const blog = `<html><body><div id="content"><article class="post"><div class="entry">
    <h3>Highlights</h3><ul>${[1, 2, 3, 4].map(item).join('')}</ul>
    <h3>Fission</h3><ul>${[5, 6, 7].map(item).join('')}<li>Marionette is Fission compatible<ul><li><div class="attachment">
    <p>Marionette, the framework that allows Firefox to be tested with automation, is now Fission compatible too!</p></div></li></ul></li></ul>
    <ul>${[8, 9].map(item).join('')}</ul></div></article></div>${sidebar}</body></html>`;
  const kept = text(blog);
  t.match(kept, 'We have just landed Bug 1, which fixes');
  t.match(kept, 'We have just landed Bug 9, which fixes');
  t.match(kept, 'now Fission compatible too');
  // article-extraction-benchmark, indiapost.com: a "breaking news" ticker, each item a linked title and its
  // summary, beside a shorter article; the article alone is the content.
  const teaser = (i: number): string =>
    `<li><a href="/story/${i}">Headline of another story number ${i}</a> NEW DELHI: The summary of that other story runs on for a sentence or two, with commas, and names.</li>`;
  const news = `<html><body><div class="ticker"><h4>Breaking News</h4><ul>${[1, 2, 3, 4, 5, 6, 7, 8].map(teaser).join('')}</ul></div>
    <div class="main"><div class="post"><h1>With shattered dreams, deportees return home</h1>${paras('the deportees', 4)}</div></div></body></html>`;
  const article = text(news);
  t.match(article, 'Absatz 3 über the deportees');
  t.notMatch(article, 'The summary of that other story');
});

t.test('pictures, captions, credits and galleries inside the article are dropped; a figure framing code is kept', async (t) => {
  // article-extraction-benchmark, chron.com (Esper in Vietnam): a photo gallery at the top of the article body
  // repeated each caption and "Photo: …" credit twice, then "Back to Gallery".
  const slide = `<li class="hst-resgalleryitem"><div class="img-wrap"><img src="a.jpg" alt=""></div><div class="caption"><span class="caption-text">U.S. Defense Secretary Mark Esper, left, and the Vietnamese Defense Minister shake hands in Hanoi.</span><span class="credit">Photo: Hau Dinh, AP</span></div></li>`;
  const html = `<html><body><div class="article-body">
    <div class="asset_gallery"><div class="hst-resgallery-container"><ul class="hst-resgallery">${slide}${slide}</ul><a href="#">Back to Gallery</a></div></div>
    <figure><img src="b.jpg"><figcaption>A long row of unsold sports-utility vehicles sits at a dealership, photographed on a Sunday.</figcaption></figure>
    ${paras('the visit', 4)}
    <figure class="highlight"><pre><code>const answer = 42;</code></pre></figure>
    </div></body></html>`;
  const kept = text(html);
  // trafilatura-eval, vogelwarte.ch: the picture's legend beside the news text.
  const legend = text(
    `<html><body><main><div id="content">${paras('den Aktionsplan', 4)}<div class="rightImageHighslide"><img src="c.jpg"><div class="legend"><div class="content">Der Hirschkäfer (Lucanus cervus) lebt in lichten Wäldern.</div></div></div></div></main></body></html>`,
  );
  t.match(legend, 'Absatz 3 über den Aktionsplan');
  t.notMatch(legend, 'Hirschkäfer');
  t.match(kept, 'Absatz 2 über the visit');
  t.match(kept, 'const answer = 42;');
  t.notMatch(kept, 'Defense Secretary Mark Esper');
  t.notMatch(kept, 'Photo: Hau Dinh');
  t.notMatch(kept, 'Back to Gallery');
  t.notMatch(kept, 'unsold sports-utility vehicles');
});

t.test('ruby annotations, soft hyphens and an article shipped in <noscript> read as the text a person reads', async (t) => {
  // trafilatura-eval, nhk.or.jp (NEWS WEB EASY): every kanji carries its reading in <rt>, which was glued into
  // the words ("子こども").
  const ruby = text(
    `<html><body><article><p><ruby>子<rt>こ</rt></ruby>どもへの<ruby>虐待<rt>ぎゃくたい</rt></ruby>をなくすための<ruby>法律<rt>ほうりつ</rt></ruby>ができて、<ruby>親<rt>おや</rt></ruby>が<ruby>子<rt>こ</rt></ruby>どもを<ruby>教育<rt>きょういく</rt></ruby>するために、たたいたりすることを<ruby>禁止<rt>きんし</rt></ruby>しました。</p></article></body></html>`,
  );
  t.match(ruby, '子どもへの虐待をなくすための法律ができて、親が子どもを教育するために、');
  t.notMatch(ruby, 'ぎゃくたい');
  // trafilatura-eval, weinkenner.de (St. Magdalener): the text is hyphenated with &shy; inside every long word.
  const shy = text(
    `<html><body><article><p>Ita&shy;li&shy;ens, neben Baro&shy;lo und Bar&shy;ba&shy;res&shy;co, was aber eher zyni&shy;schem Macht&shy;kal&shy;kül ent&shy;sprang.</p></article></body></html>`,
  );
  t.match(shy, 'Italiens, neben Barolo und Barbaresco');
  // trafilatura-eval, security.googleblog.com: the post body is a <script type="text/template"> for the browser
  // and the same markup in <noscript>; nothing else on the page is text.
  const post = paras('Safe Browsing', 3);
  const blog = text(
    `<html><body><div class="post-body"><div class="post-content"><script type="text/template">${post}</script><noscript>${post}</noscript></div></div></body></html>`,
  );
  t.match(blog, 'Absatz 2 über Safe Browsing');
  // A short <noscript> notice stays out.
  t.equal(text('<html><body><div id="root"></div><noscript>You need to enable JavaScript to run this app.</noscript></body></html>'), '');
});

t.test('a list of other articles named "related-articles" is furniture inside the article', async (t) => {
  // trafilatura-eval, mein-schoener-garten.de (Jerusalem artichoke): "Verwandte Artikel" teasers inside the
  // article element, whose class name says "articles".
  const teaser = (i: number): string =>
    `<div class="teaser"><h3><a href="/r/${i}">Rüben: Schätze aus dem Untergrund ${i}</a></h3><p>Ein kurzer Anriss des anderen Artikels.</p></div>`;
  const kept = text(`<html><body><main><article class="article">${paras('Topinambur', 7)}
    <div class="related-articles"><div class="h3">Verwandte Artikel</div>${[1, 2, 3].map(teaser).join('')}</div>
    </article></main></body></html>`);
  t.match(kept, 'Absatz 6 über Topinambur');
  t.notMatch(kept, 'Verwandte Artikel');
  t.notMatch(kept, 'Ein kurzer Anriss');
});

t.test("the lead of the page's one <article> joins the body; its byline does not", async (t) => {
  // trafilatura-eval, deutschlandfunk.de (Titanic): the lead sits in the article's own head module, a sibling of
  // the much longer body module; only the body was kept.
  const lead =
    'Die Digitalisierung der Arbeitswelt werde Millionen Arbeitsplätze kosten, warnen Ökonomen seit Jahren, und die Politik reagiert darauf kaum.';
  const kept = text(
    `<html><body><div id="content"><article class="dlf-articledetail">
      <div class="articlehead"><div class="text"><h1>Die Titanic der Arbeitswelt</h1><p class="subtitle">${lead}</p><p class="author">Richard David Precht im Gespräch mit Karin Fischer</p></div></div>
      <div class="articlemain"><div class="text">${paras('Arbeit', 12)}</div></div>
    </article></div>${sidebar}</body></html>`,
  );
  t.match(kept, 'Die Digitalisierung der Arbeitswelt werde Millionen');
  t.match(kept, 'Absatz 11 über Arbeit');
  t.notMatch(kept, 'im Gespräch mit Karin Fischer');
});

t.test("a heading's anchor id or a header's class is no furniture hint; a header with a lead is the intro", async (t) => {
  // trafilatura-eval, heise.de (lithium): sub-headings carry ids made from their text ("nav_nur_die_folie__1"),
  // which matched the "nav" furniture word.
  const heise = text(`<html><body><article class="article-layout"><div class="article-content">${paras('Akkus', 3)}
    <h3 id="nav_nur_die_folie__1" class="subheading">Nur die Folie bleibt zurück</h3>${paras('Recycling', 3)}</div></article></body></html>`);
  t.match(heise, 'Nur die Folie bleibt zurück');
  // trafilatura-eval, wochenblatt.com (Heinen-Esser): the lead is in <header class="m-intro-header"> inside <main>;
  // "header" in the class dropped it. A masthead whose class says header (links, no prose) still goes.
  const wochenblatt = text(`<html><body><div class="site-header"><a href="/">Wochenblatt</a> <a href="/abo">Abo</a></div>
    <main class="l-main"><div class="l-container-medium"><header class="m-intro-header"><h1>Heinen-Esser trifft Landwirte</h1>
    <p class="a-lead">In einem ersten Gespräch zeigte sich die NRW-Landwirtschaftsministerin offen für die Sorgen der Bauern, und für ihre Vorschläge.</p></header>
    ${paras('Agrarpolitik', 5)}</div></main></body></html>`);
  t.match(wochenblatt, 'In einem ersten Gespräch zeigte sich die NRW-Landwirtschaftsministerin');
  t.match(wochenblatt, 'Absatz 4 über Agrarpolitik');
  t.notMatch(wochenblatt, 'Abo');
});

t.test('page-builder text widgets holding prose are content; a sidebar widget without prose is not', async (t) => {
  // trafilatura-eval, shabka.org (about us): every text block of the page is an "elementor-widget"; the word
  // "widget" dropped all but the one that outweighed the share guard.
  const widget = (topic: string, n: number): string =>
    `<div class="elementor-element elementor-widget elementor-widget-text-editor"><div class="elementor-widget-container"><div class="elementor-text-editor">${paras(topic, n)}</div></div></div>`;
  const kept = text(`<html><body><div class="elementor-section"><div class="elementor-column"><div class="elementor-widget-wrap">
    ${widget('Strategie', 3)}${widget('Buchprojekt', 1)}${widget('Zukunft', 1)}
    <div class="elementor-widget elementor-widget-icon-list"><ul><li><a href="/a">Facebook</a></li><li><a href="/b">Twitter</a></li></ul></div>
    </div></div></div></body></html>`);
  t.match(kept, 'Absatz 2 über Strategie');
  t.match(kept, 'Absatz 0 über Buchprojekt');
  t.match(kept, 'Absatz 0 über Zukunft');
  t.notMatch(kept, 'Facebook');
});

t.test('author boxes, post metadata, ratings and reading times are furniture whatever else their class says', async (t) => {
  // trafilatura-eval, knowtechie.com (Rocket League): the author box sits inside the post's content wrapper.
  const knowtechie = text(`<html><body><div id="mvp-content-main">${paras('Rocket League', 5)}
    <div id="mvp-author-box-wrap" class="left relative"><div id="mvp-author-box-text"><p>Ich bin Redakteur und schreibe über Spiele. You can keep up with me on Twitter, where I post about games, news and anything else.</p></div></div>
    </div></body></html>`);
  t.match(knowtechie, 'Absatz 4 über Rocket League');
  t.notMatch(knowtechie, 'You can keep up with me on Twitter');
  // trafilatura-eval, disfunctions.de and aktion-hummelschutz.de: "postmetadata" and "post-ratings" inside the post.
  const post = text(`<html><body><div id="content"><div class="post">${paras('Podcasts', 5)}
    <span class="post-ratings">War der Artikel nützlich?</span>
    <div class="postmetadata">Erstellt am Dienstag 6. Mai 2014 in Podcasts</div>
    <div class="entryfooter"><p>Kommentare geschlossen</p></div></div></div></body></html>`);
  t.match(post, 'Absatz 4 über Podcasts');
  t.notMatch(post, 'War der Artikel nützlich?');
  t.notMatch(post, 'Erstellt am Dienstag');
  // trafilatura-eval, jovelstefan.de: the post's own footer line.
  t.notMatch(post, 'Kommentare geschlossen');
  // A block so named that holds the story's own summary paragraph stays (trafilatura-eval, rnz.de: the dek is in
  // "nfy-ar-teaser-detail").
  const dek =
    text(`<html><body><div class="article"><div class="ar-teaser-detail"><p>Für einen Roman über die Jugend in der alten Bundesrepublik erhält der Autor die höchste Auszeichnung der Branche.</p></div>
    ${paras('Buchpreis', 5)}</div></body></html>`);
  t.match(dek, 'Für einen Roman über die Jugend');
});

t.test('a live ticker whose entries are classed "comment" is the content; a readers\' comment thread is not', async (t) => {
  // trafilatura-eval, sports.fr (a live match report): the minute-by-minute entries sit in
  // "live-match-comments" / "live-match-comment-body"; the comment-thread rule dropped the whole report.
  const entry = (m: number, s: string): string =>
    `<div class="live-match-comment"><div class="live-match-comment-time">${m}'</div><div class="live-match-comment-body">${s}</div></div>`;
  const html = `<html><body><main><div class="live-match"><h2>Match en direct</h2>
    <div class="live-match-details">Stade Yves Allainmat, 17h00</div>
    <div class="live-match-comments">
      ${entry(95, "C'est terminé au Moustoir ! Lorient a tenu tête à Lyon, avec un point mérité au bout d'un match intense, disputé, et serré jusqu'au bout.")}
      ${entry(52, 'Le coup de pied de coin ne donne rien. Les Lyonnais repartent en contre, mais la défense bretonne, bien regroupée, veille au grain.')}
      ${entry(3, 'Les deux équipes se cherchent en ce début de match, avec de longues possessions, quelques fautes, et peu de situations franches.')}
    </div></div>
    <div id="comments" class="comments-area"><p>Super match, merci pour le direct, on attend la suite avec impatience !</p></div></main>${sidebar}</body></html>`;
  const kept = text(html);
  t.match(kept, "C'est terminé au Moustoir");
  t.match(kept, 'Le coup de pied de coin ne donne rien.');
  t.match(kept, 'se cherchent en ce début de match');
  t.notMatch(kept, 'merci pour le direct');
});

t.test('an article the parser leaves beside the <body> element is still read', async (t) => {
  // trafilatura-eval, brigitte.de (ikigai): the parsed tree holds the header and the article as siblings of <body>
  // (a browser would have moved them inside), and <body> held only teasers and the footer; only a teaser was kept.
  const html = `<html><head><title>Ikigai</title></head><div class="page"><div class="header">BRIGITTE</div></div>
    <div class="main__content-wrapper"><div class="o-article"><article class="o-article__text"><div class="rte">
      ${paras('Ikigai', 6)}<ol class="rte--list"><li><strong>Praktiziere Dankbarkeit</strong></li><li>Bleibe stets aktiv</li></ol>
    </div></article></div></div>
    <body><div class="sb-box"><p>Tolle Preise zu gewinnen: jetzt mitmachen, und mit etwas Glück eine Reise für zwei gewinnen!</p></div><footer>Impressum</footer></body></html>`;
  const kept = text(html);
  t.match(kept, 'Absatz 5 über Ikigai');
  t.match(kept, 'Praktiziere Dankbarkeit');
  t.notMatch(kept, 'Tolle Preise');
});

t.test("in an infinite scroll of stories, the first <article> is the page's story though a later one is longer", async (t) => {
  // trafilatura-eval, hoy.com.py (vehicle blessing): the page's story is followed by the next stories, each an
  // article of the same class in a wrapper of its own; the longest, a later one, was chosen alone.
  const story = (i: number, topic: string, n: number): string =>
    `<div class="scrollblock"><article id="article-${i}" class="entry-main-content"><h1>${topic}</h1><div class="entry-text">${paras(topic, n)}</div></article></div>`;
  const html = `<html><body><main>${story(0, 'die Fahrzeugsegnung', 3)}${story(1, 'die Fiskalpolitik', 12)}</main>${sidebar}</body></html>`;
  const kept = text(html);
  t.match(kept, 'Absatz 0 über die Fahrzeugsegnung');
  t.match(kept, 'Absatz 2 über die Fahrzeugsegnung');
});

t.test('a BEM modifier naming what a section carries ("Section--Ads") is no furniture hint', async (t) => {
  // trafilatura-eval, chip.de (a grill test): each section of the test report is "TestReport__Section
  // TestReport__Section--Ads" (a section with an ad slot); all but one were dropped as ads.
  const section = (id: string, topic: string): string =>
    `<section id="${id}" class="TestReport__Section TestReport__Section--Ads"><h2>${topic}</h2><div class="cf-t">${paras(topic, 2)}</div></section>`;
  const html = `<html><body><div class="TestReport">${section('Lieferumfang', 'den Lieferumfang')}${section('Ergebnis', 'das Grillergebnis')}${section('Fazit', 'das Fazit')}
    <div class="ad-slot ads">Anzeige: Jetzt Grill kaufen und sparen</div></div>${sidebar}</body></html>`;
  const kept = text(html);
  t.match(kept, 'Absatz 1 über den Lieferumfang');
  t.match(kept, 'Absatz 0 über das Grillergebnis');
  t.match(kept, 'Absatz 1 über das Fazit');
  t.notMatch(kept, 'Jetzt Grill kaufen');
});

t.test('a lead in a text-only <div> beside the article joins it, as a <p> would', async (t) => {
  // trafilatura-eval, spiegel.de (print edition): the standfirst is a <div class="dig-vorspann"> holding only text,
  // a sibling of the body; a <p> there joined the article, the <div> did not.
  const html = `<html><body><div class="dig-artikel">
    <div class="dig-vorspann">Ein Mann stirbt in Polizeigewahrsam, die Beamten schweigen. Wie konnte es dazu kommen?</div>
    <div class="dig-text">${paras('den Fall', 6)}</div></div>${sidebar}</body></html>`;
  const kept = text(html);
  t.match(kept, 'Wie konnte es dazu kommen?');
  t.match(kept, 'Absatz 5 über den Fall');
});

t.test("a heading whose own box lost all its text goes, though the next box's text follows it", async (t) => {
  // trafilatura-eval, weselpower.wordpress.com: "Ähnliche Beiträge" over a list of linked posts stayed, because the
  // tags line of the next box followed it in reading order.
  const html = `<html><body><article class="post"><div class="post-content">${paras('Monster', 4)}
    <div class="post-box"><h3><em>Ähnliche Beiträge</em></h3>
      <div class="post-box-items"><p><a href="/1">Monster im Winter</a></p><p><a href="/2">Monster im Sommer</a></p></div></div>
    <div class="post-box"><p>Schlagwörter: Monster, Winter, und noch mehr Wörter für eine Zeile</p></div></div></article>${sidebar}</body></html>`;
  const kept = text(html);
  t.match(kept, 'Absatz 3 über Monster');
  t.notMatch(kept, 'Ähnliche Beiträge');
});

t.test('tag lists and disclaimers are furniture even when their class names the article', async (t) => {
  // trafilatura-eval, coaching-magazin.de ("article__tags" held "Themen:") and villagevoice.com (an
  // "editorial-disclaimer" after the story).
  const html = `<html><body><article class="article box"><div class="article__body">${paras('Coaching', 5)}
    <div class="article__tags"><strong>Themen:</strong> Coaching, Generationen, Familie, Beruf, Führung</div>
    <div class="editorial-disclaimer"><p class="editorial-disclaimer-text">The advertising disclaimer below does not apply to this article.</p></div>
    </div></article>${sidebar}</body></html>`;
  const kept = text(html);
  t.match(kept, 'Absatz 4 über Coaching');
  t.notMatch(kept, 'Themen:');
  t.notMatch(kept, 'advertising disclaimer');
});

t.test('a script hook (js-lightbox-gallery) is no furniture hint; an <aside> wrapping the whole article is not a side note', async (t) => {
  // trafilatura-eval, drk.de: a text-and-picture block "o-media js-lightbox-gallery" held two paragraphs of the
  // press release, dropped as a gallery; rnz.de: the article sits in an <aside class="…direct-content">.
  const drk = `<html><body><main><article class="c-article"><div class="o-cms-content__body">${paras('das Rote Kreuz', 3)}
    <div class="o-media js-lightbox-gallery"><div class="o-media__body"><p>Zudem betreibt das DRK Frühwarnsysteme, und hilft Gemeinden, sich auf Dürren, Stürme, und Überschwemmungen vorzubereiten.</p></div></div>
    </div></article></main>${sidebar}</body></html>`;
  t.match(text(drk), 'Zudem betreibt das DRK');
  const rnz = `<html><body><main><aside class="nfy-pa nfy-pa-direct-content"><section class="nfy-ar"><article class="cf"><h1>Buchpreis</h1>
    <div class="nfy-ar-text-detail">${paras('den Buchpreis', 5)}</div></article></section></aside>
    <aside class="sidebar-box"><p>Unsere Leser empfehlen diese Artikel, und noch viele mehr, in der Übersicht der Redaktion für Sie.</p></aside></main></body></html>`;
  const kept = text(rnz);
  t.match(kept, 'Absatz 4 über den Buchpreis');
  t.notMatch(kept, 'Unsere Leser empfehlen');
});
