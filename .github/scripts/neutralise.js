// Text from a measure job's artifact is data: in an issue, a comment or a job summary it
// mentions no one, links (and so notifies) no issue, hides nothing in an HTML comment and folds
// nothing that benchwatch did not write. The one copy: reusable-comment.yml, reusable-issues.yml
// and the record jobs require it from benchwatch's sparse checkout at the pinned commit.
const ZW = '\u200b';

// What GitHub turns into a mention or an issue link gets a zero-width space: after every @
// (whatever precedes it: `_@alice_` is emphasis around a mention), a # before a digit, GH- and
// /issues/, /pull/, /discussions/ before a number; a backslash escape renders as the character.
const breakOthers = (text) => text
  .replace(/#(?=\\?[0-9])/g, `#${ZW}`) // #N and owner/repo#N link (and notify) issues
  .replace(/(G\\?H\\?-)(?=\\?[0-9])/gi, `$1${ZW}`)
  .replace(/\/(issues|pull|discussions)(\\?\/)(?=\\?[0-9])/gi, `/$1$2${ZW}`);
const breakRefs = (text) => breakOthers(text.replace(/@(?!\u200b)/g, `@${ZW}`));

// Character references: GitHub decodes every one outside code (`&#x40;`, `&commat;`, `&num;`),
// so each is decoded first and broken like the rest, then every `&` left is escaped: a reference
// this table does not know shows as its text, never as a character the breaks above missed.
const NAMED = {
  amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", num: '#', commat: '@', colon: ':', sol: '/', bsol: '\\',
  lowbar: '_', UnderBar: '_', hyphen: '-', dash: '\u2010', period: '.', comma: ',', excl: '!', quest: '?',
  lpar: '(', rpar: ')', lsqb: '[', lbrack: '[', rsqb: ']', rbrack: ']', lcub: '{', lbrace: '{', rcub: '}',
  rbrace: '}', ast: '*', midast: '*', plus: '+', equals: '=', percnt: '%', dollar: '$', grave: '`',
  DiacriticalGrave: '`', Hat: '^', verbar: '|', vert: '|', VerticalLine: '|', semi: ';', Tab: '\t',
  NewLine: '\n', nbsp: '\u00a0', ndash: '\u2013', mdash: '\u2014', hellip: '\u2026', middot: '\u00b7',
  times: '\u00d7', divide: '\u00f7', plusmn: '\u00b1', minus: '\u2212', le: '\u2264', ge: '\u2265',
  ne: '\u2260', deg: '\u00b0', micro: '\u00b5', larr: '\u2190', rarr: '\u2192', uarr: '\u2191',
  darr: '\u2193', lsquo: '\u2018', rsquo: '\u2019', ldquo: '\u201c', rdquo: '\u201d', bull: '\u2022',
  copy: '\u00a9', reg: '\u00ae', trade: '\u2122', zwsp: '\u200b', ZeroWidthSpace: '\u200b',
};
const fromCodePoint = (n) => (n > 0 && n <= 0x10ffff && !(n >= 0xd800 && n <= 0xdfff) ? String.fromCodePoint(n) : '\ufffd');
const decodeReferences = (text) => text.replace(/&(?:#([0-9]{1,7})|#[xX]([0-9a-fA-F]{1,6})|([A-Za-z][A-Za-z0-9]{0,31}));/g,
  (whole, dec, hex, name) => {
    if (dec !== undefined) return fromCodePoint(Number(dec));
    if (hex !== undefined) return fromCodePoint(parseInt(hex, 16));
    return Object.prototype.hasOwnProperty.call(NAMED, name) ? NAMED[name] : whole;
  });
const quietText = (text) => breakRefs(text).replace(/&/g, '&amp;');

// Code spans are left as they are: GitHub links and notifies nothing in code, and a variant id
// (`hello@latest`) or a command must stay copyable. A span counts only where no block or inline
// structure around it can make it anything else, else its text is broken like the rest:
// - no HTML block that blank lines do not end (<pre, <script, <style, <textarea, <!, <?) anywhere;
// - its paragraph (lines up to a blank line) holds no `<` (HTML, autolinks), no `](` or `][`
//   (a link's destination or label, read before the backticks in it), no `://` or `www.`
//   (an autolink runs over backticks), no `$` (math);
// - in every line of that paragraph, each piece between `|` (a table's cells) pairs all its
//   backtick runs within itself, so no run can pair across a line, a cell or a block.
const ESCAPABLE = /[!-\/:-@[-`{-~]/; // ASCII punctuation: a backslash escapes it
const pairedRuns = (text, start, end) => {
  const spans = [];
  let i = start;
  while (i < end) {
    if (text[i] === '\\' && i + 1 < end && ESCAPABLE.test(text[i + 1])) { i += 2; continue; }
    if (text[i] !== '`') { i += 1; continue; }
    let j = i;
    while (j < end && text[j] === '`') j += 1;
    let k = j;
    let close = -1;
    while (k < end && close < 0) { // the next run of as many backticks closes it (no escapes in code)
      if (text[k] !== '`') { k += 1; continue; }
      let l = k;
      while (l < end && text[l] === '`') l += 1;
      if (l - k === j - i) close = l;
      k = l;
    }
    if (close < 0) return null; // a run that pairs with nothing here could pair with one elsewhere
    spans.push([i, close]);
    i = close;
  }
  return spans;
};
const codeSpans = (text) => {
  if (/<(?:pre|script|style|textarea|[!?])/i.test(text)) return [];
  const lines = [];
  const breaks = /\r\n|\r|\n/g;
  let from = 0;
  for (let m = breaks.exec(text); m !== null; m = breaks.exec(text)) {
    lines.push([from, m.index]);
    from = m.index + m[0].length;
  }
  lines.push([from, text.length]);
  const spans = [];
  let paragraph = [];
  const close = () => {
    const body = paragraph.map(([s, e]) => text.slice(s, e)).join('\n');
    let found = /[<$]|\]\(|\]\[|:\/\/|www\./i.test(body) ? null : [];
    for (const [s, e] of paragraph) {
      for (let p = s; found !== null; p += 1) { // each piece of the line between `|`s
        let q = text.indexOf('|', p);
        if (q < 0 || q > e) q = e;
        const pieces = pairedRuns(text, p, q);
        found = pieces === null ? null : found.concat(pieces);
        if (q === e) break;
        p = q;
      }
    }
    if (found !== null) spans.push(...found);
    paragraph = [];
  };
  for (const [s, e] of lines) {
    if (/^[ \t]*$/.test(text.slice(s, e))) close();
    else paragraph.push([s, e]);
  }
  close();
  return spans;
};

const quiet = (text) => {
  // decoded once, as GitHub does (`&amp;#64;` shows `&#64;`), comments dropped after (an encoded
  // `&lt;!--` is one too)
  const t = decodeReferences(String(text)).replace(/<!--[\s\S]*?(?:-->|$)/g, ''); // an HTML comment hides text from the reader
  let out = '';
  let at = 0;
  for (const [s, e] of codeSpans(t)) {
    out += quietText(t.slice(at, s)) + t.slice(s, e);
    at = e;
  }
  return out + quietText(t.slice(at));
};

// the folded tables benchwatch writes are kept (balanced, never open); every other tag is text
const plainTags = (text) => {
  const allowed = /^<(?:\/?(?:details|summary|b))>$/;
  let depth = 0;
  let balanced = true;
  for (const tag of text.match(/<\/?details>/g) || []) {
    depth += tag === '<details>' ? 1 : -1;
    if (depth < 0) balanced = false;
  }
  balanced = balanced && depth === 0;
  return text.replace(/<[^<>]*>?/g, (tag) => (balanced && allowed.test(tag) ? tag : tag.replace(/</g, '&lt;')));
};

// markdown from an artifact, safe to post
const neutralise = (text) => plainTags(quiet(text));

// one line shown as it is, never as markdown (an issue title): nothing decoded, references broken
// but an @ after a letter or digit (`svc@latest` mentions no one, and issues are found by title)
const plainLine = (text) => breakOthers(String(text).replace(/[\u0000-\u001f\u007f]/g, ' ')
  .replace(/(?<![A-Za-z0-9])@(?!\u200b)/g, `@${ZW}`));

// a count or figure from an artifact: a finite number printed by us, never the artifact's text
const count = (x) => (Number.isSafeInteger(x) && x >= 0 ? String(x) : 'n/a');

module.exports = { quiet, plainTags, neutralise, plainLine, count };
