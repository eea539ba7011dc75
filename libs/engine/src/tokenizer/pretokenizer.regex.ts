/** GPT-2's split regex, used by a ByteLevel pre-tokenizer with `use_regex: true`. */
export const GPT2_SPLIT_PATTERN = String.raw`'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`;

/**
 * Translates an Oniguruma/PCRE split pattern from tokenizer.json into a JS regex.
 * Node 20's V8 has no inline modifiers, so `(?i:...)` (Llama-3, Qwen2) becomes a
 * non-capturing group with each ASCII letter spelled as `[xX]`; possessive
 * quantifiers (`?+`, `++`, `*+`) become greedy ones, which split the same way on
 * these patterns because their alternatives never need to backtrack into them.
 */
export function toJsRegex(pattern: string): RegExp {
  let out = '';
  let i = 0;
  let caseless = 0; // depth of open (?i: groups
  const groupStack: boolean[] = [];
  let inClass = false;
  // True right after a quantifier, where a '+' makes it possessive and a '?' lazy.
  let afterQuantifier = false;
  while (i < pattern.length) {
    const ch = pattern[i];
    if (ch === '\\') {
      // Copy escapes whole, including \p{...}, so their letters are never case-folded.
      const m = /^\\[pP]\{[^}]*\}/.exec(pattern.slice(i));
      const esc = m ? m[0] : pattern.slice(i, i + 2);
      out += esc;
      i += esc.length;
      afterQuantifier = false;
      continue;
    }
    if (inClass) {
      if (ch === ']') inClass = false;
      out += caseless > 0 && /[a-zA-Z]/.test(ch) ? ch.toLowerCase() + ch.toUpperCase() : ch;
      i++;
      continue;
    }
    if (afterQuantifier && (ch === '+' || ch === '?')) {
      if (ch === '?') out += ch; // lazy stays; possessive '+' is dropped
      afterQuantifier = false;
      i++;
      continue;
    }
    afterQuantifier = false;
    if (ch === '*' || ch === '+' || ch === '?') {
      out += ch;
      afterQuantifier = true;
      i++;
      continue;
    }
    if (ch === '{') {
      const m = /^\{\d*(,\d*)?\}/.exec(pattern.slice(i));
      if (m) {
        out += m[0];
        i += m[0].length;
        afterQuantifier = true;
        continue;
      }
    }
    if (ch === '[') {
      inClass = true;
      out += ch;
      i++;
      continue;
    }
    if (pattern.startsWith('(?i:', i)) {
      groupStack.push(true);
      caseless++;
      out += '(?:';
      i += 4;
      continue;
    }
    if (ch === '(') {
      groupStack.push(false);
      out += pattern.startsWith('(?', i) ? pattern.slice(i, i + 3) : ch;
      i += pattern.startsWith('(?', i) ? 3 : 1;
      continue;
    }
    if (ch === ')') {
      if (groupStack.pop()) caseless--;
      out += ch;
      i++;
      continue;
    }
    out += caseless > 0 && /[a-zA-Z]/.test(ch) ? `[${ch.toLowerCase()}${ch.toUpperCase()}]` : ch;
    i++;
  }
  return new RegExp(out, 'gu');
}

export type SplitBehavior = 'Isolated' | 'Removed' | 'MergedWithPrevious' | 'MergedWithNext' | 'Contiguous';

/** Splits `text` the way the Hugging Face `Split` pre-tokenizer does for the given behaviour. */
export function splitByRegex(text: string, re: RegExp, behavior: SplitBehavior, invert = false): string[] {
  // Pieces as (text, isMatch) in order, covering the whole input.
  const parts: Array<[string, boolean]> = [];
  let last = 0;
  re.lastIndex = 0;
  for (const m of text.matchAll(re)) {
    if (m[0].length === 0) continue;
    const at = m.index ?? 0;
    if (at > last) parts.push([text.slice(last, at), invert]);
    parts.push([m[0], !invert]);
    last = at + m[0].length;
  }
  if (last < text.length) parts.push([text.slice(last), invert]);
  const out: string[] = [];
  switch (behavior) {
    case 'Isolated':
      return parts.map((p) => p[0]);
    case 'Removed':
      return parts.filter((p) => !p[1]).map((p) => p[0]);
    case 'MergedWithPrevious':
      for (const [s, isMatch] of parts) {
        if (isMatch && out.length > 0) out[out.length - 1] += s;
        else out.push(s);
      }
      return out;
    case 'MergedWithNext': {
      let carry = '';
      for (const [s, isMatch] of parts) {
        if (isMatch) carry += s;
        else {
          out.push(carry + s);
          carry = '';
        }
      }
      if (carry) out.push(carry);
      return out;
    }
    case 'Contiguous':
      for (let i = 0; i < parts.length; i++) {
        if (i > 0 && parts[i][1] && parts[i - 1][1]) out[out.length - 1] += parts[i][0];
        else out.push(parts[i][0]);
      }
      return out;
  }
}
