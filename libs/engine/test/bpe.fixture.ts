import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
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

/**
 * Writes a chat model's tokenizer into `dir`: tokenizer.json with the merges "he" and "ll"
 * (ids 256–257) and <|endoftext|> 258, <|im_start|> 259, <|im_end|> 260, and `config` as its
 * tokenizer_config.json.
 */
export function writeChatBpeTokenizer(dir: string, config: Record<string, unknown>): void {
  const merges: Array<[string, string]> = [
    ['h', 'e'],
    ['l', 'l'],
  ];
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(tinyBpeTokenizer(merges, ['<|endoftext|>', '<|im_start|>', '<|im_end|>'])));
  writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify(config));
}
