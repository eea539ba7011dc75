// The DroidSpeak benchmarks' data: the trained (base → fine-tune) pairs from tools/train, and
// sliding windows over their held-out in-domain text, tokenized with the models' own BPE.
// Each window is a context of `context` tokens (reused from the base) followed by `tail` tokens of
// the text that comes next (scored, teacher-forced, against the derived model's own top-1).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadTokenizerDir } from '@mnemo/engine';
import { patternKey, recomputedLayers } from '@mnemo/kv-core';

const MODELS = 'tools/train/models';
const SPLITS = 'tools/train/splits';
export const TRAINED_BASE = 'fortune-base';
export const TRAINED_DERIVED = ['fortune-computers', 'fortune-songs'];

/** The trained pairs: model directories and the paths of each fine-tune's profile and test splits. */
export function trainedPairs(root, only = TRAINED_DERIVED) {
  const base = join(root, MODELS, TRAINED_BASE);
  if (!existsSync(join(base, 'config.json'))) throw new Error(`${base}: no trained base model (see tools/train/README.md)`);
  return only.map((name) => ({
    base,
    derived: join(root, MODELS, name),
    profileSplit: join(root, SPLITS, `${name}.profile.txt`),
    testSplit: join(root, SPLITS, `${name}.test.txt`),
  }));
}

/**
 * A split's text as the models were trained on it: each fortune (entries separated by a line
 * holding only `%`) as <|endoftext|> followed by its BPE tokens, all concatenated.
 */
export function splitTokens(modelDir, splitPath) {
  const tokenizer = loadTokenizerDir(modelDir);
  const bos = JSON.parse(readFileSync(join(modelDir, 'config.json'), 'utf8')).bos_token_id;
  const texts = readFileSync(splitPath, 'utf8')
    .split('\n%\n')
    .map((t) => t.replace(/\n+$/, ''))
    .filter((t) => t.trim());
  return texts.flatMap((t) => [bos, ...tokenizer.encode(t)]);
}

/** `count` windows of `context + tail` tokens, starting evenly spaced over the tokens (they overlap when the text is short). */
export function slidingWindows(tokens, { count, context, tail }) {
  const span = context + tail;
  if (tokens.length < span) throw new Error(`a window needs ${span} tokens; the split has ${tokens.length}`);
  const stride = count > 1 ? Math.floor((tokens.length - span) / (count - 1)) : 0;
  const prompts = [];
  const continuations = [];
  for (let i = 0; i < count; i++) {
    const at = i * stride;
    prompts.push(tokens.slice(at, at + context));
    continuations.push(tokens.slice(at + context, at + span));
  }
  return { prompts, continuations, stride };
}

/**
 * The speed/quality curve's patterns: for each number of recomputed layers k = 0..L, the pattern
 * the profile rated best (highest top-1 agreement, then lowest KL) among those recomputing k layers.
 */
export function curvePatterns(measured, layers) {
  const best = new Map();
  for (const m of measured) {
    const k = recomputedLayers(m.pattern, layers).length;
    const cur = best.get(k);
    if (!cur || m.top1Agreement > cur.top1Agreement || (m.top1Agreement === cur.top1Agreement && m.meanKl < cur.meanKl)) best.set(k, m);
  }
  return [...best.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([k, m]) => ({ recomputed: k, pattern: m.pattern, key: patternKey(m.pattern) }));
}
