import { createHash } from 'node:crypto';
import { ErrorCode } from '../errors/error-code.enum.js';
import { MnemoError } from '../errors/mnemo.error.js';
import { CHUNK_TOKENS } from './chunk.constants.js';
import { chainHeader, chainLink, chunkKeyBytes, chunkKeys, hexToKey, isChunkKey, keyToHex, nextChunkKey } from './chunk-key.hasher.js';

function range(n: number): number[];
function range<T>(n: number, f: (i: number) => T): T[];
function range(n: number, f: (i: number) => unknown = (i) => i): unknown[] {
  return Array.from({ length: n }, (_, i) => f(i));
}

/** Re-derives the documented encoding byte by byte, independent of the implementation's helpers. */
function referenceChain(model: string, salt: string, chunks: number[][]): string[] {
  const lp = (s: string): Buffer => {
    const b = Buffer.from(s, 'utf8');
    const len = Buffer.alloc(4);
    len.writeUInt32LE(b.length);
    return Buffer.concat([len, b]);
  };
  let prev = Buffer.alloc(16);
  return chunks.map((chunk) => {
    const toks = Buffer.alloc(4 + 4 * chunk.length);
    toks.writeUInt32LE(chunk.length, 0);
    chunk.forEach((t, i) => toks.writeUInt32LE(t, 4 + 4 * i));
    prev = createHash('sha256')
      .update(Buffer.concat([prev, lp(model), lp(salt), toks]))
      .digest()
      .subarray(0, 16);
    return prev.toString('hex');
  });
}

describe(chunkKeys.name, () => {
  describe('known-answer vectors (wire contract: changing these breaks every stored key)', () => {
    const vectors: Array<[string, string, string, number[], number, string[]]> = [
      ['two tiny chunks', 'm', 's', [1, 2, 3, 4], 2, ['2184d8f8be75f4c715c1d717ed6f900a', 'e8e93ea35927606e4245067124115687']],
      ['one full chunk, empty salt', 'llama-3-8b', '', range(256), CHUNK_TOKENS, ['22cd33f7406112d774753b632ae9d649']],
      [
        'two full chunks',
        'llama-3-8b',
        'tenant-a',
        range(512),
        CHUNK_TOKENS,
        ['26fa5aae377e995c4c6418961182f553', 'ae4f885502ca71cd350ff5929fbfbab4'],
      ],
      [
        'non-ASCII ids, max token ids',
        'modèle-ü',
        'sälz',
        range(256, (i) => 4294967295 - i),
        CHUNK_TOKENS,
        ['4cd3c62b12580c68e333e84ea5a20ce2'],
      ],
    ];

    it.each(vectors)('%s', (_name, model, salt, tokens, chunk, expected) => {
      expect(chunkKeys(model, salt, tokens, chunk)).toEqual(expected);
    });

    it.each(vectors)('%s matches an independent re-derivation of the documented encoding', (_n, model, salt, tokens, chunk, expected) => {
      const chunks = range(Math.floor(tokens.length / chunk), (c) => tokens.slice(c * chunk, (c + 1) * chunk));
      expect(referenceChain(model, salt, chunks)).toEqual(expected);
    });
  });

  const base = range(3 * CHUNK_TOKENS, (i) => (i * 7919) % 50000);

  it.each([
    ['empty', 0, 0],
    ['one token short of a chunk', CHUNK_TOKENS - 1, 0],
    ['exactly one chunk', CHUNK_TOKENS, 1],
    ['one chunk plus a partial tail', CHUNK_TOKENS + 1, 1],
    ['three chunks', 3 * CHUNK_TOKENS, 3],
  ])('emits keys only for complete chunks: %s', (_name, n, keys) => {
    const sut = chunkKeys('m', 's', base.slice(0, n));
    expect(sut).toHaveLength(keys);
    sut.forEach((k) => expect(isChunkKey(k)).toBe(true));
  });

  it('prefix property: keys of a prefix are a prefix of the keys', () => {
    const all = chunkKeys('m', 's', base);
    for (let n = 0; n <= base.length; n += 97) {
      const sut = chunkKeys('m', 's', base.slice(0, n));
      expect(sut).toEqual(all.slice(0, sut.length));
    }
  });

  it.each([
    ['different tenant salt', 'm', 't'],
    ['different model', 'm2', 's'],
    ['salt moved into the model id', 'ms', ''],
  ])('isolates: %s → disjoint keys', (_name, model, salt) => {
    const a = chunkKeys('m', 's', base);
    const b = chunkKeys(model, salt, base);
    expect(b).toHaveLength(a.length);
    b.forEach((k) => expect(a).not.toContain(k));
  });

  it('chains: same chunk tokens after a different prefix give a different key', () => {
    const chunk = base.slice(0, CHUNK_TOKENS);
    const other = range(CHUNK_TOKENS, (i) => i + 1);
    const [, afterSelf] = chunkKeys('m', 's', [...chunk, ...chunk]);
    const [, afterOther] = chunkKeys('m', 's', [...other, ...chunk]);
    expect(afterSelf).not.toBe(afterOther);
  });

  it('gives identical keys for number[] and Uint32Array input', () => {
    expect(chunkKeys('m', 's', Uint32Array.from(base))).toEqual(chunkKeys('m', 's', base));
  });

  it.each([
    ['negative', [-1]],
    ['fractional', [1.5]],
    ['2^32', [2 ** 32]],
    ['NaN', [NaN]],
  ])('rejects a %s token id with invalid_request', (_name, bad) => {
    const tokens = [...base.slice(0, 10), ...bad];
    expect(() => chunkKeys('m', 's', tokens)).toThrow(MnemoError);
    expect(() => chunkKeys('m', 's', tokens)).toThrow(expect.objectContaining({ code: ErrorCode.InvalidRequest }));
  });

  it.each([[0], [-16], [2.5]])('rejects chunkTokens %p', (chunk) => {
    expect(() => chunkKeys('m', 's', base, chunk)).toThrow(expect.objectContaining({ code: ErrorCode.InvalidRequest }));
  });
});

describe(chunkKeyBytes.name, () => {
  it('returns the same keys as 16-byte arrays', () => {
    const tokens = range(2 * CHUNK_TOKENS);
    const sut = chunkKeyBytes('m', 's', tokens);
    expect(sut.map((k) => k.length)).toEqual([16, 16]);
    expect(sut.map(keyToHex)).toEqual(chunkKeys('m', 's', tokens));
  });
});

describe(nextChunkKey.name, () => {
  it('extends a chain one chunk at a time, matching chunkKeys', () => {
    const tokens = range(3 * CHUNK_TOKENS, (i) => i * 3);
    const expected = chunkKeys('m', 's', tokens);
    let prev: string | null = null;
    const sut: string[] = [];
    for (let c = 0; c < 3; c++) {
      prev = nextChunkKey(prev, 'm', 's', tokens.slice(c * CHUNK_TOKENS, (c + 1) * CHUNK_TOKENS));
      sut.push(prev);
    }
    expect(sut).toEqual(expected);
    expect(nextChunkKey(hexToKey(expected[0]!), 'm', 's', tokens.slice(CHUNK_TOKENS, 2 * CHUNK_TOKENS))).toBe(expected[1]);
  });

  it.each([
    ['an empty chunk', null, []],
    ['a short previous key', 'abcd', [1]],
  ])('rejects %s', (_name, prev, chunk) => {
    expect(() => nextChunkKey(prev, 'm', 's', chunk)).toThrow(expect.objectContaining({ code: ErrorCode.InvalidRequest }));
  });
});

describe(hexToKey.name, () => {
  it.each([['UPPERCASE'.padEnd(32, '0')], ['0'.repeat(31)], ['g'.repeat(32)]])('rejects %p', (hex) => {
    expect(() => hexToKey(hex)).toThrow(expect.objectContaining({ code: ErrorCode.InvalidRequest }));
  });

  it('round-trips with keyToHex', () => {
    const hex = '0123456789abcdef0123456789abcdef';
    expect(keyToHex(hexToKey(hex))).toBe(hex);
  });
});

describe(chainLink.name, () => {
  const toks = range(300, (i) => (i * 13) % 1000);
  it('is nextChunkKey over a range of tokens, with the header encoded once', () => {
    const prev = hexToKey(chunkKeys('m', 's', toks)[0]!);
    const header = chainHeader('m', 's');
    for (const [start, count] of [
      [0, 16],
      [256, 44],
      [10, 1],
    ] as const) {
      expect(keyToHex(chainLink(prev, header, toks, start, count))).toBe(nextChunkKey(prev, 'm', 's', toks.slice(start, start + count)));
    }
  });

  it('rejects a token id outside u32 in the range it reads, and an empty range', () => {
    const bad = [...toks.slice(0, 16), -1];
    expect(() => chainLink(new Uint8Array(16), chainHeader('m', 's'), bad, 0, 17)).toThrow(MnemoError);
    expect(keyToHex(chainLink(new Uint8Array(16), chainHeader('m', 's'), bad, 0, 16))).toHaveLength(32);
    expect(() => chainLink(new Uint8Array(16), chainHeader('m', 's'), toks, 0, 0)).toThrow(MnemoError);
  });
});
