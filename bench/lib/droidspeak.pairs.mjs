// The DroidSpeak benchmarks' data: the trained (base → fine-tune) pairs from tools/train, and
// sliding windows over their held-out in-domain text, tokenized with the models' own BPE.
// Each window is a context of `context` tokens (reused from the base) followed by `tail` tokens of
// the text that comes next (scored, teacher-forced, against the derived model's own top-1).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { adapterBaseDir, loadTokenizerDir } from '@mnemo/engine';
import { patternKey, recomputedLayers } from '@mnemo/kv-core';

const MODELS = 'tools/train/models';
const SPLITS = 'tools/train/splits';
export const TRAINED_BASE = 'fortune-base';
export const TRAINED_DERIVED = ['fortune-computers', 'fortune-songs'];

/**
 * The pair kinds of the DroidSpeak paper's Table 1, on the models tools/train trained. `base` is
 * the model whose KV is reused, `derived` the one that serves the request; `split` names the
 * held-out text of the derived model's own domain (a LoRA of a category shares the full
 * fine-tune's splits of that category). Nothing here was chosen for the reuse it allows: every
 * model's hyper-parameters come from its own validation loss (tools/train/TRAINING.json).
 */
export const PAIRS = [
  { name: 'base→computers', kind: 'base_full_ft', base: 'fortune-base', derived: 'fortune-computers', split: 'fortune-computers' },
  { name: 'base→songs', kind: 'base_full_ft', base: 'fortune-base', derived: 'fortune-songs', split: 'fortune-songs' },
  { name: 'computers→songs', kind: 'full_ft_pair', base: 'fortune-computers', derived: 'fortune-songs', split: 'fortune-songs' },
  { name: 'base→lora-computers', kind: 'base_lora', base: 'fortune-base', derived: 'fortune-lora-computers', split: 'fortune-computers' },
  { name: 'base→lora-songs', kind: 'base_lora', base: 'fortune-base', derived: 'fortune-lora-songs', split: 'fortune-songs' },
  {
    name: 'base→lora-definitions',
    kind: 'base_lora',
    base: 'fortune-base',
    derived: 'fortune-lora-definitions',
    split: 'fortune-lora-definitions',
  },
  {
    name: 'lora-computers→lora-songs',
    kind: 'lora_pair',
    base: 'fortune-lora-computers',
    derived: 'fortune-lora-songs',
    split: 'fortune-songs',
  },
];
export const PAIR_KINDS = ['base_full_ft', 'full_ft_pair', 'base_lora', 'lora_pair'];

/** A pair of PAIRS as model directories and the paths of its derived model's profile and test splits. */
export function pairPaths(root, pair) {
  const dir = (m) => join(root, MODELS, m);
  for (const m of [pair.base, pair.derived])
    if (!existsSync(join(dir(m), 'tokenizer.json'))) throw new Error(`${dir(m)}: no trained model (see tools/train/README.md)`);
  return {
    ...pair,
    base: dir(pair.base),
    derived: dir(pair.derived),
    profileSplit: join(root, SPLITS, `${pair.split}.profile.txt`),
    testSplit: join(root, SPLITS, `${pair.split}.test.txt`),
  };
}

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
  // An adapter directory has no config.json: the bos id is its base's.
  const configDir = existsSync(join(modelDir, 'config.json')) ? modelDir : adapterBaseDir(modelDir);
  const bos = JSON.parse(readFileSync(join(configDir, 'config.json'), 'utf8')).bos_token_id;
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
