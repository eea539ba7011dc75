import { MAX_MERGE_TOKEN_ID, mergeWord, pairKey, type MergeRule } from './bpe.merger.js';
import { bytesToUnicode, unicodeToBytes } from './byte-unicode.map.js';
import { GPT2_SPLIT_PATTERN, splitByRegex, toJsRegex, type SplitBehavior } from './pretokenizer.regex.js';
import type { Tokenizer } from './tokenizer.interface.js';

/** The parts of a Hugging Face tokenizer.json that byte-level BPE uses. */
export interface TokenizerJson {
  added_tokens?: Array<{ id: number; content: string; special?: boolean }>;
  normalizer?: NormalizerJson | null;
  pre_tokenizer?: PreTokenizerJson | null;
  model: {
    type?: string;
    vocab: Record<string, number>;
    merges: Array<string | [string, string]>;
    ignore_merges?: boolean;
    unk_token?: string | null;
  };
}
type NormalizerJson = { type: string; normalizers?: NormalizerJson[] };
type PreTokenizerJson = {
  type: string;
  pretokenizers?: PreTokenizerJson[];
  pattern?: { Regex?: string; String?: string };
  behavior?: SplitBehavior;
  invert?: boolean;
  add_prefix_space?: boolean;
  use_regex?: boolean;
};

export interface BpeSpecialIds {
  readonly bosToken?: string;
  readonly eosToken?: string;
}

type PreTokenize = (pieces: string[]) => string[];

/** Words longer than this (in bytes) are not cached: a hostile body must not fill memory. */
const CACHED_WORD_BYTES = 256;
const CACHED_WORDS = 50_000;

/**
 * Byte-level BPE (GPT-2 / Llama-3 / Qwen2 style): added tokens are cut out first and
 * kept whole, the rest is normalised, split by the file's pre-tokenizer regex, mapped
 * byte → token id, and merged by rank ({@link mergeWord}, O(n log n) per word).
 */
export class BpeTokenizer implements Tokenizer {
  readonly vocabSize: number;
  readonly bosTokenId: number;
  readonly eosTokenId: number;
  private readonly vocab: Map<string, number>;
  private readonly idToToken: Map<number, string>;
  private readonly rules = new Map<number, MergeRule>();
  /** Token id of each single byte (-1 when the vocabulary lacks it). */
  private readonly byteIds = new Int32Array(256);
  /** Longest ordinary token in bytes (a vocab string has one char per byte). */
  private readonly maxVocabTokenBytes: number;
  private readonly added = new Map<string, { id: number; special: boolean }>();
  private readonly addedById = new Map<number, { content: string; special: boolean }>();
  private readonly addedRe: RegExp | null;
  private readonly preTokenize: PreTokenize;
  private readonly normalize: (s: string) => string;
  private readonly ignoreMerges: boolean;
  private readonly unkId: number | undefined;
  private readonly cache = new Map<string, number[]>();

  constructor(json: TokenizerJson, special: BpeSpecialIds = {}) {
    if (json.model.type !== undefined && json.model.type !== 'BPE') throw new Error(`tokenizer model ${json.model.type} is not BPE`);
    this.vocab = new Map(Object.entries(json.model.vocab));
    this.idToToken = new Map([...this.vocab].map(([t, id]) => [id, t]));
    for (let b = 0; b < 256; b++) this.byteIds[b] = this.vocab.get(bytesToUnicode(Uint8Array.of(b))) ?? -1;
    json.model.merges.forEach((m, rank) => {
      const [a, b] = typeof m === 'string' ? splitMerge(m) : m;
      const [left, right, merged] = [this.vocab.get(a), this.vocab.get(b), this.vocab.get(a + b)];
      if (left === undefined || right === undefined || merged === undefined) {
        throw new Error(`merge ${JSON.stringify(`${a} ${b}`)} names a token that is not in the vocabulary`);
      }
      if (left >= MAX_MERGE_TOKEN_ID || right >= MAX_MERGE_TOKEN_ID)
        throw new Error(`token id ${Math.max(left, right)} is too large for BPE merges`);
      // A pair listed twice keeps its last rank, as the Hugging Face loader does.
      this.rules.set(pairKey(left, right), { rank, merged });
    });
    let longest = 1;
    for (const t of this.vocab.keys()) longest = Math.max(longest, t.length);
    this.maxVocabTokenBytes = longest;
    for (const t of json.added_tokens ?? []) {
      this.added.set(t.content, { id: t.id, special: t.special ?? false });
      this.addedById.set(t.id, { content: t.content, special: t.special ?? false });
    }
    const addedSorted = [...this.added.keys()].sort((a, b) => b.length - a.length);
    this.addedRe = addedSorted.length > 0 ? new RegExp(addedSorted.map(escapeRegex).join('|'), 'gu') : null;
    this.preTokenize = buildPreTokenizer(json.pre_tokenizer ?? null);
    this.normalize = buildNormalizer(json.normalizer ?? null);
    this.ignoreMerges = json.model.ignore_merges ?? false;
    this.unkId = json.model.unk_token ? this.vocab.get(json.model.unk_token) : undefined;
    const ids = [...this.vocab.values(), ...this.addedById.keys()];
    this.vocabSize = ids.reduce((a, b) => Math.max(a, b), -1) + 1;
    this.eosTokenId = this.resolve(special.eosToken, ['<|im_end|>', '<|endoftext|>', '<|end_of_text|>', '</s>', '<|eos|>']);
    this.bosTokenId = this.resolve(special.bosToken, ['<|begin_of_text|>', '<s>', '<|bos|>', '<|endoftext|>']);
  }

  encode(text: string): number[] {
    return this.encodeWithin(text, Infinity)!;
  }

  encodeWithin(text: string, limit: number): number[] | null {
    const out: number[] = [];
    let last = 0;
    if (this.addedRe) {
      this.addedRe.lastIndex = 0;
      for (const m of text.matchAll(this.addedRe)) {
        const at = m.index ?? 0;
        if (at > last && !this.encodeOrdinary(text.slice(last, at), out, limit)) return null;
        out.push(this.added.get(m[0])!.id);
        if (out.length > limit) return null;
        last = at + m[0].length;
      }
    }
    if (last < text.length && !this.encodeOrdinary(text.slice(last), out, limit)) return null;
    return out;
  }

  decode(tokens: readonly number[]): string {
    const bytes: number[] = [];
    const enc = new TextEncoder();
    for (const id of tokens) {
      const a = this.addedById.get(id);
      if (a) {
        // Special tokens are control, not text (like skip_special_tokens=True).
        if (!a.special) bytes.push(...enc.encode(a.content));
        continue;
      }
      const tok = this.idToToken.get(id);
      if (tok !== undefined) unicodeToBytes(tok, bytes);
    }
    return new TextDecoder('utf-8', { fatal: false }).decode(Uint8Array.from(bytes));
  }

  specialTokenId(name: string): number | undefined {
    return this.added.get(name)?.id;
  }

  /**
   * Appends the tokens of text without added tokens; false (stopping early) once `out` is sure
   * to pass `limit`: a word of b bytes yields at least ⌈b / longest token⌉ tokens, so no word
   * is merged whose lower bound already overflows, and merge work stays within limit × that.
   */
  private encodeOrdinary(text: string, out: number[], limit: number): boolean {
    const enc = new TextEncoder();
    for (const piece of this.preTokenize([this.normalize(text)])) {
      if (piece.length === 0) continue;
      let ids = this.cache.get(piece);
      if (!ids) {
        const bytes = enc.encode(piece);
        if (out.length + Math.ceil(bytes.length / this.maxVocabTokenBytes) > limit) return false;
        ids = this.bpe(bytes);
        if (bytes.length <= CACHED_WORD_BYTES && this.cache.size < CACHED_WORDS) this.cache.set(piece, ids);
      }
      for (const id of ids) out.push(id);
      if (out.length > limit) return false;
    }
    return true;
  }

  private bpe(bytes: Uint8Array): number[] {
    if (this.ignoreMerges) {
      const whole = this.vocab.get(bytesToUnicode(bytes));
      if (whole !== undefined) return [whole];
    }
    const ids = Array.from(bytes, (b) => this.byteIds[b]!);
    const missing = ids.indexOf(-1);
    if (missing >= 0 && this.unkId === undefined) {
      throw new Error(
        `byte-level BPE: symbol ${JSON.stringify(bytesToUnicode(bytes.subarray(missing, missing + 1)))} not in vocab and no unk token`,
      );
    }
    // Symbols outside the vocabulary never merge; they become the unk token.
    return mergeWord(ids, this.rules).map((id) => (id < 0 ? this.unkId! : id));
  }

  private resolve(configured: string | undefined, fallbacks: string[]): number {
    for (const name of configured ? [configured, ...fallbacks] : fallbacks) {
      const id = this.added.get(name)?.id ?? this.vocab.get(name);
      if (id !== undefined) return id;
    }
    return 0;
  }
}

function splitMerge(m: string): [string, string] {
  const i = m.indexOf(' ', 1);
  if (i < 0) throw new Error(`malformed merge ${JSON.stringify(m)}`);
  return [m.slice(0, i), m.slice(i + 1)];
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

function buildNormalizer(n: NormalizerJson | null): (s: string) => string {
  if (!n) return (s) => s;
  switch (n.type) {
    case 'NFC':
    case 'NFD':
    case 'NFKC':
    case 'NFKD':
      return (s) => s.normalize(n.type as 'NFC');
    case 'Sequence': {
      const fs = (n.normalizers ?? []).map(buildNormalizer);
      return (s) => fs.reduce((acc, f) => f(acc), s);
    }
    default:
      throw new Error(`unsupported tokenizer normalizer ${n.type}`);
  }
}

function buildPreTokenizer(p: PreTokenizerJson | null): PreTokenize {
  if (!p) return (pieces) => pieces;
  switch (p.type) {
    case 'Sequence': {
      const steps = (p.pretokenizers ?? []).map(buildPreTokenizer);
      return (pieces) => steps.reduce((acc, f) => f(acc), pieces);
    }
    case 'Split': {
      const src = p.pattern?.Regex ?? (p.pattern?.String !== undefined ? escapeRegex(p.pattern.String) : undefined);
      if (src === undefined) throw new Error('Split pre-tokenizer without a pattern');
      const re = toJsRegex(src);
      return (pieces) => pieces.flatMap((s) => splitByRegex(s, re, p.behavior ?? 'Isolated', p.invert ?? false));
    }
    case 'ByteLevel': {
      const re = p.use_regex === false ? null : toJsRegex(GPT2_SPLIT_PATTERN);
      return (pieces) =>
        pieces.flatMap((s, i) => {
          const t = p.add_prefix_space && i === 0 && !/^\s/u.test(s) ? ` ${s}` : s;
          return re ? splitByRegex(t, re, 'Isolated') : [t];
        });
    }
    default:
      throw new Error(`unsupported pre-tokenizer ${p.type}`);
  }
}
