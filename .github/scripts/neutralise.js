// Text from a measure job's artifact is data: in an issue, a comment or a job summary it
// mentions no one, links (and so notifies) no issue, hides nothing in an HTML comment and folds
// nothing that benchwatch did not write. reusable-comment.yml holds the same two functions inline
// (it checks nothing out); tests/test_workflow_attacks.py checks that both give the same text.
const ZW = '\u200b';

// zero-width space after what would mention, link or hide; entity forms of @ first
const quiet = (text) => String(text)
  .replace(/<!--[\s\S]*?(?:-->|$)/g, '')
  .replace(/&(?:#0*64|#x0*40|commat);?/gi, '@')
  .replace(/(^|[^A-Za-z0-9_])@(?=[A-Za-z0-9_-])/g, `$1@${ZW}`) // a@b (a figure, an address) mentions no one
  .replace(/#(?=[0-9])/g, `#${ZW}`)
  .replace(/\b(GH)-(?=[0-9])/gi, `$1-${ZW}`)
  .replace(/\/(issues|pull|discussions)\/(?=[0-9])/gi, `/$1/${ZW}`);

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

// a count or figure from an artifact: a finite number printed by us, never the artifact's text
const count = (x) => (Number.isSafeInteger(x) && x >= 0 ? String(x) : 'n/a');

module.exports = { quiet, plainTags, neutralise, count };
