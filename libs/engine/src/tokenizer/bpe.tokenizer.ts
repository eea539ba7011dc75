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

/**
 * Byte-level BPE (GPT-2 / Llama-3 / Qwen2 style): added tokens are cut out first and
 * kept whole, the rest is normalised, split by the file's pre-tokenizer regex, mapped
 * byte → unicode, and merged by rank.
 */
export class BpeTokenizer implements Tokenizer {
  readonly vocabSize: number;
  readonly bosTokenId: number;
  readonly eosTokenId: number;
  private readonly vocab: Map<string, number>;
  private readonly idToToken: Map<number, string>;
  private readonly ranks = new Map<string, number>();
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
    json.model.merges.forEach((m, rank) => {
      const [a, b] = typeof m === 'string' ? splitMerge(m) : m;
      this.ranks.set(pairKey(a, b), rank);
    });
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
    const out: number[] = [];
    let last = 0;
    if (this.addedRe) {
      this.addedRe.lastIndex = 0;
      for (const m of text.matchAll(this.addedRe)) {
        const at = m.index ?? 0;
        if (at > last) this.encodeOrdinary(text.slice(last, at), out);
        out.push(this.added.get(m[0])!.id);
        last = at + m[0].length;
      }
    }
    if (last < text.length) this.encodeOrdinary(text.slice(last), out);
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

  private encodeOrdinary(text: string, out: number[]): void {
    const enc = new TextEncoder();
    for (const piece of this.preTokenize([this.normalize(text)])) {
      if (piece.length === 0) continue;
      const word = bytesToUnicode(enc.encode(piece));
      let ids = this.cache.get(word);
      if (!ids) {
        ids = this.bpe(word);
        if (this.cache.size < 50_000) this.cache.set(word, ids);
      }
      out.push(...ids);
    }
  }

  /** Repeatedly merges the adjacent pair of lowest rank, every occurrence of it at once. */
  private bpe(word: string): number[] {
    const whole = this.vocab.get(word);
    if (this.ignoreMerges && whole !== undefined) return [whole];
    let syms = Array.from(word);
    while (syms.length > 1) {
      let best = Infinity;
      let bestPair: [string, string] | null = null;
      for (let i = 0; i + 1 < syms.length; i++) {
        const r = this.ranks.get(pairKey(syms[i], syms[i + 1]));
        if (r !== undefined && r < best) {
          best = r;
          bestPair = [syms[i], syms[i + 1]];
        }
      }
      if (!bestPair) break;
      const next: string[] = [];
      for (let i = 0; i < syms.length; i++) {
        if (i + 1 < syms.length && syms[i] === bestPair[0] && syms[i + 1] === bestPair[1]) {
          next.push(syms[i] + syms[i + 1]);
          i++;
        } else next.push(syms[i]);
      }
      syms = next;
    }
    return syms.map((s) => {
      const id = this.vocab.get(s);
      if (id !== undefined) return id;
      if (this.unkId !== undefined) return this.unkId;
      throw new Error(`byte-level BPE: symbol ${JSON.stringify(s)} not in vocab and no unk token`);
    });
  }

  private resolve(configured: string | undefined, fallbacks: string[]): number {
    for (const name of configured ? [configured, ...fallbacks] : fallbacks) {
      const id = this.added.get(name)?.id ?? this.vocab.get(name);
      if (id !== undefined) return id;
    }
    return 0;
  }
}

function pairKey(a: string, b: string): string {
  return `${a}\u0000${b}`;
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
