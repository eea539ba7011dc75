import { CHUNK_TOKENS } from './chunk.constants.js';
import { chunkKeys } from './chunk-key.hasher.js';
import { heldChunkPrefix } from './held-prefix.js';

describe(heldChunkPrefix.name, () => {
  const tokens = Array.from({ length: 3 * CHUNK_TOKENS + 10 }, (_, i) => (i * 7) % 1000);
  const keys = chunkKeys('m', 't', tokens);

  it.each<[string, number[], number | undefined, number]>([
    ['nothing held', [], undefined, 0],
    ['every whole chunk held (the tail is not a chunk)', [0, 1, 2], undefined, 3],
    ['the walk stops at the first gap', [0, 2], undefined, 1],
    ['a held later chunk without its first counts nothing', [1, 2], undefined, 0],
    ['capped at maxChunks', [0, 1, 2], 2, 2],
    ['a cap past the prompt is the prompt', [0, 1, 2], 9, 3],
  ])('%s', (_n, held, max, want) => {
    const set = new Set(held.map((c) => keys[c]!));
    expect(heldChunkPrefix('m', 't', tokens, (k) => set.has(k), max)).toBe(want);
  });

  it('keys are the chain chunkKeys gives: another model or tenant holds nothing of it', () => {
    const set = new Set(keys);
    expect(heldChunkPrefix('other', 't', tokens, (k) => set.has(k))).toBe(0);
    expect(heldChunkPrefix('m', 'other', tokens, (k) => set.has(k))).toBe(0);
  });
});
