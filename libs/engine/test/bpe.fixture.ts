import { bytesToUnicode } from '../src/tokenizer/byte-unicode.map.js';
import type { TokenizerJson } from '../src/tokenizer/bpe.tokenizer.js';

/**
 * A small byte-level BPE tokenizer.json for tests: ids 0–255 are the bytes, each merge adds
 * the next id, then the added tokens follow (special unless named in `plain`). Pre-tokenizer:
 * GPT-2 ByteLevel splitting.
 */
export function tinyBpeTokenizer(merges: Array<[string, string]>, added: readonly string[], plain: readonly string[] = []): TokenizerJson {
  const vocab: Record<string, number> = {};
  for (let b = 0; b < 256; b++) vocab[bytesToUnicode(Uint8Array.of(b))] = b;
  let next = 256;
  for (const [a, b] of merges) vocab[a + b] = next++;
  return {
    added_tokens: added.map((content) => ({ id: next++, content, special: !plain.includes(content) })),
    normalizer: { type: 'NFC' },
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, use_regex: true },
    model: { type: 'BPE', vocab, merges },
  };
}
