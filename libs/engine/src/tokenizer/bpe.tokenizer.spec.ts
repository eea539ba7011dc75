import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BpeTokenizer, type TokenizerJson } from './bpe.tokenizer.js';
import { ByteTokenizer } from './byte-tokenizer.js';
import { bytesToUnicode } from './byte-unicode.map.js';
import { applyChatTemplate, applyChatTemplateWithin } from './chat-template.js';
import { splitByRegex, toJsRegex } from './pretokenizer.regex.js';
import { loadTokenizer } from './tokenizer.loader.js';

/** Qwen2's split regex, verbatim from its tokenizer.json. */
const QWEN2_PATTERN =
  String.raw`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ` + String.raw`?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`;

function fixture(merges: Array<string | [string, string]>, preTokenizer: TokenizerJson['pre_tokenizer']): TokenizerJson {
  const vocab: Record<string, number> = {};
  for (let b = 0; b < 256; b++) vocab[bytesToUnicode(Uint8Array.of(b))] = b;
  let next = 256;
  for (const m of merges) {
    const [a, b] = typeof m === 'string' ? m.split(' ') : m;
    vocab[a + b] = next++;
  }
  return {
    added_tokens: [
      { id: 400, content: '<|endoftext|>', special: true },
      { id: 401, content: '<|im_start|>', special: true },
      { id: 402, content: '<|im_end|>', special: true },
      { id: 403, content: '[NOTE]', special: false },
    ],
    normalizer: { type: 'NFC' },
    pre_tokenizer: preTokenizer,
    model: { type: 'BPE', vocab, merges },
  };
}

const QWEN_PRE = {
  type: 'Sequence',
  pretokenizers: [
    { type: 'Split', pattern: { Regex: QWEN2_PATTERN }, behavior: 'Isolated' as const, invert: false },
    { type: 'ByteLevel', add_prefix_space: false, use_regex: false },
  ],
};
const MERGES = ['h e', 'l l', 'he ll', 'hell o', 'Ġ w', 'o r', 'Ġw or', 'Ġwor l', 'Ġworl d'];

describe(BpeTokenizer.name, () => {
  const sut = new BpeTokenizer(fixture(MERGES, QWEN_PRE), { eosToken: '<|im_end|>' });
  const id = (s: string): number => 256 + MERGES.findIndex((m) => m.replace(' ', '') === s);

  it('applies merges into whole words', () => {
    expect(sut.encode('hello world')).toEqual([id('hello'), id('Ġworld')]);
  });

  it('round-trips arbitrary text, including multi-byte characters and whitespace runs', () => {
    for (const text of ['héllo wörld', '世界 🙂!\n\n  tabs\t\tend', "I'M here, it's 2024.", '']) {
      expect(sut.decode(sut.encode(text))).toBe(text.normalize('NFC'));
    }
  });

  it('keeps special tokens whole, never merges across them, and drops them when decoding', () => {
    const ids = sut.encode('<|im_start|>user\nhello<|im_end|>[NOTE]');
    expect(ids[0]).toBe(401);
    expect(ids.slice(-2)).toEqual([402, 403]);
    expect(ids).toContain(id('hello'));
    expect(sut.decode(ids)).toBe('user\nhello[NOTE]');
    expect(sut.specialTokenId('<|im_end|>')).toBe(402);
    expect(sut.eosTokenId).toBe(402);
    expect(sut.vocabSize).toBe(404);
  });

  it('merges by rank, not left to right', () => {
    const pre = { type: 'ByteLevel', add_prefix_space: false, use_regex: true };
    const encodeAbc = (merges: Array<[string, string]>) => new BpeTokenizer(fixture(merges, pre)).encode('abc');
    const bcFirst: Array<[string, string]> = [
      ['b', 'c'],
      ['a', 'b'],
    ];
    expect(encodeAbc(bcFirst)).toEqual([97, 256]);
    expect(encodeAbc([...bcFirst].reverse())).toEqual([256, 99]);
  });

  it('encodeWithin equals encode up to the limit and gives up past it', () => {
    const text = 'hello world<|im_end|> hello';
    const all = sut.encode(text);
    expect(sut.encodeWithin(text, all.length)).toEqual(all);
    expect(sut.encodeWithin(text, all.length - 1)).toBeNull();
    expect(sut.encodeWithin('<|im_end|>', 0)).toBeNull();
  });

  it('refuses a 2 MiB single word within a prompt limit in bounded time', () => {
    const word = 'hel'.repeat((2 << 20) / 3);
    const t0 = performance.now();
    expect(sut.encodeWithin(word, 8192)).toBeNull();
    expect(applyChatTemplateWithin(sut, [{ role: 'user', content: word }], 8192)).toBeNull();
    expect(performance.now() - t0).toBeLessThan(2000);
  });

  it('works with the chat template', () => {
    const ids = applyChatTemplate(sut, [{ role: 'user', content: 'hello' }]);
    expect(ids.filter((t) => t === 401)).toHaveLength(2);
    expect(sut.decode(ids)).toBe('user\nhello\nassistant\n');
  });
});

describe('pre-tokenizer regex', () => {
  it('translates (?i:...) and splits like the Hugging Face Split(Isolated)', () => {
    const re = toJsRegex(QWEN2_PATTERN);
    expect(splitByRegex("I'M fine, you'RE 42", re, 'Isolated')).toEqual(['I', "'M", ' fine', ',', ' you', "'RE", ' ', '4', '2']);
    expect(splitByRegex('a\n\n  b', re, 'Isolated')).toEqual(['a', '\n\n', ' ', ' b']);
  });

  it('keeps {n,m} quantifiers (Llama-3 digit groups) and drops possessive markers', () => {
    expect(splitByRegex('12345  x', toJsRegex(String.raw`\p{N}{1,3}|\s++|\p{L}`), 'Isolated')).toEqual(['123', '45', '  ', 'x']);
    expect(splitByRegex('ab', toJsRegex('a+?'), 'Removed')).toEqual(['b']);
  });

  it('GPT-2 ByteLevel splitting keeps a leading space with its word', () => {
    const t = new BpeTokenizer(fixture(['Ġ w'], { type: 'ByteLevel', add_prefix_space: true, use_regex: true }));
    expect(t.encode('w')).toEqual([256]);
    expect(t.decode(t.encode('w'))).toBe(' w');
  });
});

describe(loadTokenizer.name, () => {
  it('gives the byte tokenizer for catalog models', () => {
    expect(loadTokenizer('mnemo-tiny')).toBeInstanceOf(ByteTokenizer);
  });

  it('loads tokenizer.json and tokenizer_config.json from a directory', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mnemo-tok-'));
    try {
      writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(fixture(MERGES, QWEN_PRE)));
      writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify({ eos_token: { content: '<|endoftext|>' }, bos_token: null }));
      const t = loadTokenizer(dir);
      expect(t.eosTokenId).toBe(400);
      expect(t.decode(t.encode('hello world'))).toBe('hello world');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(() => loadTokenizer('/nonexistent')).toThrow(/no tokenizer/);
  });
});
