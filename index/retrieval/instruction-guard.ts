/**
 * Flags indexed text that reads like instructions to a language model, so svc_context can warn
 * (`instruction_like_text`). A signal, never a filter: text stays quotable as written. Patterns target injection
 * forms seen in the wild (English and French) and deliberately skip phrases ordinary prose uses innocently.
 */

/**
 * Folds text for matching: Unicode compatibility form, diacritics removed, lower case, curly quotes straightened,
 * zero-width and soft-hyphen characters removed (they are used to split trigger words), whitespace collapsed.
 */
function fold(text: string): string {
  // ASCII text (most excerpts): compatibility form, marks, zero-width characters, curly quotes and homoglyphs are all
  // non-ASCII, so only the backtick, the case and the whitespace are left to fold.
  // Each replace only when there is something to replace (excerpts come with their whitespace already collapsed).
  if (!/[^\p{ASCII}]/u.test(text)) {
    const lower = text.toLowerCase();
    const quoted = lower.includes('`') ? lower.replace(/`/g, "'") : lower;
    return /[^\S ]| {2}/.test(quoted) ? quoted.replace(/\s+/g, ' ') : quoted;
  }
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/gu, '')
    .replace(/[\u200b-\u200f\u2060\ufeff\u00ad]/gu, '')
    .replace(/[’‘`´]/gu, "'")
    .toLowerCase()
    .replace(HOMOGLYPHS, (ch) => HOMOGLYPH_MAP[ch] ?? ch)
    .replace(/\s+/gu, ' ');
}

/**
 * Cyrillic and Greek letters that look like Latin ones ("ignоre" with a Cyrillic о): folded to Latin so a
 * look-alike spelling does not hide a match. Real Cyrillic or Greek prose cannot spell the English or French
 * trigger phrases after folding, so this adds no false positive.
 */
const HOMOGLYPH_MAP: Readonly<Record<string, string>> = {
  а: 'a',
  в: 'b',
  е: 'e',
  ё: 'e',
  к: 'k',
  м: 'm',
  н: 'h',
  о: 'o',
  р: 'p',
  с: 'c',
  т: 't',
  у: 'y',
  х: 'x',
  і: 'i',
  ї: 'i',
  ј: 'j',
  ѕ: 's',
  ԁ: 'd',
  ԛ: 'q',
  ԝ: 'w',
  ɡ: 'g',
  α: 'a',
  ε: 'e',
  ι: 'i',
  κ: 'k',
  ν: 'v',
  ο: 'o',
  ρ: 'p',
  τ: 't',
  υ: 'u',
  χ: 'x',
};
const HOMOGLYPHS = new RegExp(`[${Object.keys(HOMOGLYPH_MAP).join('')}]`, 'gu');

// Patterns run on folded text (lower case, no diacritics): French is written here without accents.
// Each pattern comes with needles: substrings one of which any match must contain. A cheap `includes` check skips
// the regex for most text (this runs on every passage of every svc_context and svc_search response).
const PATTERNS: readonly (readonly [readonly string[], RegExp])[] = [
  // -- English: override earlier instructions
  [
    ['ignore', 'disregard', 'forget', 'override', 'bypass', 'skip'],
    /\b(?:ignore|disregard|forget|override|bypass|skip)\b(?: all| any| every| of)?(?: the| your| my| these| those)?(?: (?:previous|prior|above|earlier|preceding|foregoing|former|original|initial|system|existing))+ (?:instructions?|prompts?|rules|directions|directives|guidelines|commands)\b/u,
  ],
  [
    ['ignore', 'disregard', 'forget'],
    /\b(?:ignore|disregard|forget)\b (?:all|any|everything)(?: of)?(?: the| your)? (?:instructions?|prompts?|rules|guidelines)\b/u,
  ],
  [['ignore', 'disregard', 'forget'], /\b(?:ignore|disregard|forget) (?:everything|all) (?:above|before|you (?:were|have been) told)\b/u],
  [['new instructions', 'new system prompt', 'new rules'], /\bnew (?:instructions|system prompt|rules)\s*:/u],
  // -- English: role reassignment aimed at a model
  // "You are now in airplane mode", "…chatting with our bot", "…the assistant manager" are ordinary: only model
  // identities and jailbreak states count.
  [
    ['you are now'],
    /\byou are now (?:a |an |the |my )?(?:(?:new|different|helpful|unrestricted|unfiltered|uncensored|evil|rogue|free|independent) )*(?:ai|a\.i\.|llm|language model|ai assistant|ai model|dan|jailbroken|unrestricted|unfiltered|uncensored|persona)\b/u,
  ],
  [['you are now in'], /\byou are now in (?:developer|god|dan|jailbreak|jailbroken|debug|unrestricted|unfiltered|admin) mode\b/u],
  [
    ['from now on'],
    /\bfrom now on,? you (?:are|will|must|shall|should) (?:act|behave|respond|answer|reply|pretend|roleplay|role-play|be)\b/u,
  ],
  [
    ['pretend', 'act that', 'act you', 'act to', 'act as'],
    /\b(?:pretend|act) (?:that )?(?:you are|to be|as) (?:an? )?(?:unrestricted|unfiltered|jailbroken|evil|different) (?:ai|assistant|model|chatbot)\b/u,
  ],
  // -- English: prompt exfiltration
  // Prompt-engineering guides say "add this to your system prompt": the possessive alone is not a signal.
  [
    ['system prompt', 'system message', 'hidden instructions', 'initial instructions', 'instructions verbatim'],
    /\b(?:reveal|leak|disclose|repeat|print) (?:me )?(?:your|the|its) (?:full |entire |hidden |initial |original |secret )?(?:system prompt|system message|hidden instructions|initial instructions|instructions verbatim)\b/u,
  ],
  [
    ['system prompt', 'system message', 'hidden instructions', 'initial instructions'],
    /\b(?:show|output|display|tell|give|write out|send) (?:me |us )?(?:your|its) (?:full |entire |hidden |initial |original |secret )?(?:system prompt|system message|hidden instructions|initial instructions)\b/u,
  ],
  // -- English: secrecy towards the user
  [
    ['the user'],
    /\b(?:do not|don't|never) (?:tell|inform|mention (?:this |it )?to|reveal (?:this |it )?to|show (?:this |it )?to|let) the user\b/u,
  ],
  [['the user'], /\bwithout (?:telling|informing|alerting|notifying) the user\b/u],
  // -- English: notes addressed to models reading the page
  [
    ['n ai', 'a ai', ' llm', 'language model', 'chatbot'],
    /\b(?:if you are|as) an? (?:ai|llm|large language model|language model|ai assistant|ai agent|chatbot)(?: reading| processing| summari[sz]ing| browsing)?\b.{0,80}\b(?:you must|you should|must|please|ignore|instead|do not|always)\b/u,
  ],
  [
    ['to ai', 'for ai', 'all ai', 'llm', 'language model', 'chatbot'],
    /\b(?:note|message|instructions?|attention|important) (?:to|for) (?:all )?(?:ai|llm|language model|ai assistant|ai agent|chatbot)s?\b/u,
  ],
  [
    ['reading this', 'processing this', 'summarizing this', 'summarising this', 'crawling this', 'browsing this'],
    /\b(?:ai|llm|assistant|language model|chatbot)s?(?: (?:models?|assistants?|agents?|systems?|tools?))? (?:reading|processing|summari[sz]ing|crawling|browsing) this (?:page|text|document|content|site|website|email)\b/u,
  ],
  // -- chat-template role tags and delimiters
  [['<|'], /<\|(?:im_start|im_end|system|user|assistant|endoftext|start_header_id|end_header_id|eot_id)\|>/u],
  [['system>', 'assistant>', 'prompt>', 'instruction>', 'instructions>'], /<\/?(?:system|assistant|system_prompt|instructions?)>/u],
  [['inst]', '<<'], /\[\/?inst\]|<<\/?sys>>/u],
  [['##'], /(?:^|\n|\s)#{2,} ?(?:system|instruction|instructions|assistant)\s*:?\s/u],
  [
    ['system:', 'system :', 'assistant:', 'assistant :'],
    /(?:^|[.!?] )(?:system|assistant) ?: ?(?:you are|ignore|from now on|new instructions)/u,
  ],
  // -- French: override earlier instructions
  [
    ['ignor', 'oubli', 'neglig'],
    /\b(?:ignore|ignorez|ignorer|oublie|oubliez|oublier|neglige|negligez)\b (?:toutes |tout )?(?:les |tes |vos |ces )?(?:instructions|consignes|regles|directives|indications|messages)(?: \w+)? (?:precedentes|anterieures|ci-dessus|d'avant|initiales|du systeme|systeme)\b/u,
  ],
  [
    ['ignor', 'oubli'],
    /\b(?:ignore|ignorez|oublie|oubliez) (?:tout ce qui precede|tout ce qu'on t'a dit|tout ce que l'on vous a dit|tout ce qui est au-dessus)\b/u,
  ],
  [['compte'], /\bne (?:tiens|tenez) (?:pas|plus) compte (?:des|de tes|de vos) (?:instructions|consignes|regles)\b/u],
  [['nouvelles'], /\bnouvelles (?:instructions|consignes) ?:/u],
  // -- French: role reassignment
  [
    ['tu es', 'vous etes'],
    /\b(?:tu es|vous etes) (?:desormais|maintenant|a present) (?:un |une |le |la |en )?(?:\w+ ){0,3}(?:assistant|ia|intelligence artificielle|chatbot|robot|modele|mode|personnage)\b/u,
  ],
  [
    ['a partir de maintenant', 'desormais', 'dorenavant'],
    /\b(?:a partir de maintenant|desormais|dorenavant),? (?:tu|vous) (?:es|etes|dois|devez|vas|allez|reponds|repondez|agis|agissez)\b/u,
  ],
  // -- French: prompt exfiltration
  [
    ['systeme', 'initiale', 'cachee'],
    /\b(?:revele|revelez|affiche|affichez|montre|montrez|repete|repetez|donne|donnez|ecris|ecrivez)(?:-moi)? (?:ton|votre|le|tes|vos) (?:prompt|invite|message|instructions?) (?:systeme|initiales?|cachees?)\b/u,
  ],
  // -- French: secrecy towards the user
  [
    ["l'utilisateur"],
    /\bne (?:le |la |les |lui )?(?:dis|dites|revele|revelez|mentionne|mentionnez|montre|montrez) (?:pas|jamais|rien) (?:a|de ceci a|cela a|ceci a) l'utilisateur\b/u,
  ],
  [["l'utilisateur"], /\bsans (?:le dire|en informer|prevenir|avertir|informer) (?:a )?l'utilisateur\b/u],
  // -- French: notes addressed to models
  [
    ['si tu es', 'si vous etes'],
    /\bsi (?:tu es|vous etes) (?:une ia|un modele de langage|une intelligence artificielle|un assistant ia|un chatbot|un llm)\b/u,
  ],
  [
    [' ia', "'ia", 'llm', 'modele'],
    /\b(?:note|message|instructions?) (?:a|pour) (?:l'|les )?(?:ia|assistants? ia|modeles? de langage|llm)s?\b/u,
  ],
];

/**
 * Every needle of every pattern in one alternation: folded text containing none of them (most text) matches no
 * pattern, found in one scan rather than one `includes` per needle (dozens).
 */
const ANY_NEEDLE = new RegExp(
  [...new Set(PATTERNS.flatMap(([needles]) => needles))].map((n) => n.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|'),
);

/**
 * True when `text` contains wording that addresses a language model with instructions (prompt-injection style),
 * in English or French. Case, diacritics, curly quotes and zero-width characters do not hide a match.
 */
export function looksLikeInstructions(text: string): boolean {
  if (text.length === 0) return false;
  const folded = fold(text);
  if (!ANY_NEEDLE.test(folded)) return false;
  return PATTERNS.some(([needles, re]) => needles.some((n) => folded.includes(n)) && re.test(folded));
}

/** The first matched fragment (folded), for logs and tests; null when nothing matches. */
export function instructionMatch(text: string): string | null {
  const folded = fold(text);
  if (!ANY_NEEDLE.test(folded)) return null;
  for (const [needles, re] of PATTERNS) {
    if (!needles.some((n) => folded.includes(n))) continue;
    const m = re.exec(folded);
    if (m) return m[0];
  }
  return null;
}
