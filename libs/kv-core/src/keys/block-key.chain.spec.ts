import { BLOCK_TOKENS, BLOCKS_PER_CHUNK, CHUNK_TOKENS } from './chunk.constants.js';
import { chunkKeys } from './chunk-key.hasher.js';
import { BlockKeyChain, blockKeys, chunkBlockKeys } from './block-key.chain.js';

const seqOf = (n: number, seed = 7): number[] => Array.from({ length: n }, (_, i) => (i * 31 + seed) % 261);

describe(BlockKeyChain.name, () => {
  it('gives the last block of every complete chunk exactly that chunk key', () => {
    const tokens = seqOf(3 * CHUNK_TOKENS + 40);
    const keys = blockKeys('m', 'tenant', tokens);
    const chunks = chunkKeys('m', 'tenant', tokens);
    expect(chunks).toHaveLength(3);
    chunks.forEach((k, c) => expect(keys[(c + 1) * BLOCKS_PER_CHUNK - 1]).toBe(k));
  });

  it.each([
    ['no tokens', 0, 0],
    ['less than a block', BLOCK_TOKENS - 1, 0],
    ['exactly one block', BLOCK_TOKENS, 1],
    ['a partial tail is not keyed', 5 * BLOCK_TOKENS + 3, 5],
    ['across a chunk boundary', CHUNK_TOKENS + BLOCK_TOKENS, BLOCKS_PER_CHUNK + 1],
  ])('keys full blocks only: %s', (_name, n, expected) => {
    expect(blockKeys('m', '', seqOf(n))).toHaveLength(expected);
  });

  it('extends incrementally to the same keys as one call', () => {
    const tokens = seqOf(2 * CHUNK_TOKENS + 17);
    const sut = new BlockKeyChain('m', 's');
    for (let n = 0; n <= tokens.length; n += 13) sut.extend(tokens.slice(0, n));
    sut.extend(tokens);
    expect(sut.keys).toEqual(blockKeys('m', 's', tokens));
  });

  it.each([
    ['another model', 'm2', 's', seqOf(64)],
    ['another tenant salt', 'm', 's2', seqOf(64)],
    ['one earlier token changed', 'm', 's', seqOf(64).map((t, i) => (i === 3 ? (t + 1) % 261 : t))],
  ])('changes every key at or after the difference: %s', (_name, model, salt, tokens) => {
    const base = blockKeys('m', 's', seqOf(64));
    const other = blockKeys(model, salt, tokens);
    other.forEach((k, i) => expect(k).not.toBe(base[i]));
  });

  it('keeps keys before a difference: sequences sharing a prefix share its block keys', () => {
    const a = seqOf(80);
    const b = [...a.slice(0, 40), ...seqOf(40, 99)];
    const ka = blockKeys('m', 's', a);
    const kb = blockKeys('m', 's', b);
    expect(kb.slice(0, 2)).toEqual(ka.slice(0, 2));
    expect(kb[2]).not.toBe(ka[2]);
  });
});

describe('BlockKeyChain truncated and extended again', () => {
  it.each([
    ['back into the first chunk', 10],
    ['back into a later chunk', 20],
    ['to nothing', 0],
  ])('%s gives the keys of the new tokens', (_name, keep) => {
    const a = Array.from({ length: 3 * CHUNK_TOKENS }, (_, i) => i % 250);
    const b = [
      ...a.slice(0, keep * BLOCK_TOKENS),
      ...Array.from({ length: 3 * CHUNK_TOKENS - keep * BLOCK_TOKENS }, (_, i) => (i * 3 + 1) % 250),
    ];
    const sut = new BlockKeyChain('m', 's');
    sut.extend(a);
    sut.truncate(keep);
    sut.extend(b);
    expect(sut.keys).toEqual(blockKeys('m', 's', b));
  });
});

describe(chunkBlockKeys.name, () => {
  it.each([
    ['the incomplete chunk inside the first one', 5 * BLOCK_TOKENS + 3, 0, 5],
    ['the incomplete chunk after two whole ones', 2 * CHUNK_TOKENS + 7 * BLOCK_TOKENS, 2, 7],
    ['a whole chunk: its last key is its chunk key', 2 * CHUNK_TOKENS + 7 * BLOCK_TOKENS, 1, 16],
    ['one token short of two chunks', 2 * CHUNK_TOKENS - 1, 1, 15],
    ['a chunk boundary: nothing after it', 2 * CHUNK_TOKENS, 2, 0],
    ['less than a block past one', CHUNK_TOKENS + BLOCK_TOKENS - 1, 1, 0],
    ['a chunk past the tokens', CHUNK_TOKENS, 3, 0],
  ])('gives the block keys of one chunk: %s', (_name, n, chunk, count) => {
    const tokens = seqOf(n);
    const all = blockKeys('m', 's', tokens);
    const sut = chunkBlockKeys('m', 's', tokens, chunkKeys('m', 's', tokens), chunk);
    expect(sut).toHaveLength(count);
    expect(sut).toEqual(all.slice(chunk * BLOCKS_PER_CHUNK, chunk * BLOCKS_PER_CHUNK + count));
  });

  it('refuses chunk keys that do not match the tokens', () => {
    expect(() => chunkBlockKeys('m', 's', seqOf(CHUNK_TOKENS + 20), [], 1)).toThrow(RangeError);
  });
});
