import { LookupTable } from './lookup.table.js';
import type { PoolTier, SegmentLocation } from './pool.types.js';
import {
  chunksCovering,
  hostResidentPrefix,
  restoredTokensByTier,
  restoreReach,
  restoreTier,
  restoreTouchKeys,
  worthWarming,
} from './restore.planner.js';

const L = 2;
const key = (s: string): string => Buffer.from(s).toString('hex').padStart(32, '0');
const loc = (type: PoolTier, offset: number): SegmentLocation => ({ deviceIndex: 0, type, offset, length: 100, crc32c: 1 });

/** A table holding chunk keys a..d at positions 0..3: a and b in host memory, c on SSD with layer 0 also in host, d nowhere. */
function table(): LookupTable {
  const t = new LookupTable({ numLayers: L });
  let off = 0;
  const put = (k: string, position: number, tier: PoolTier, layers = [0, 1]) => {
    for (const layer of layers) t.put({ chunkKey: key(k), position, layer }, loc(tier, (off += 4096)), 1);
  };
  put('a', 0, 'mem');
  put('b', 1, 'mem');
  put('c', 2, 'ssd');
  put('c', 2, 'mem', [0]);
  // A partial chunk after c: the first 32 tokens of chunk 3 (its second block key).
  put('p2', 3, 'ssd');
  return t;
}

const prompt = (promptTokens: number, blockKeys?: (c: number) => string[]) => ({
  chunkKeys: ['a', 'b', 'c', 'd'].map(key).slice(0, Math.floor(promptTokens / 256)),
  promptTokens,
  ...(blockKeys ? { blockKeys } : {}),
});

describe(restoreReach.name, () => {
  it.each<[string, number, number, string[], number]>([
    ['whole chunks from the device prefix on', 1000, 0, ['a', 'b', 'c'], 768],
    ['from the chunk the device prefix falls in', 1000, 300, ['b', 'c'], 768],
    ['never past the row that computes the logits', 768, 0, ['a', 'b', 'c'], 767],
    ['nothing past the device', 1000, 768, [], 768],
  ])('%s', (_name, tokens, device, keys, until) => {
    const sut = restoreReach(table(), prompt(tokens), device);
    expect(sut.chunks.map((c) => c.chunkKey)).toEqual(keys.map(key));
    expect(sut.until).toBe(until);
  });

  it('adds the longest partial chunk held of the chunk after the whole ones', () => {
    // Chunk 3's block keys: p1 (16 tokens), p2 (32 tokens, held), p3 (48 tokens).
    const sut = restoreReach(
      table(),
      prompt(1000, (c) => (c === 3 ? ['p1', 'p2', 'p3'].map(key) : [])),
      0,
    );
    expect(sut.chunks.map((c) => c.chunkKey)).toEqual(['a', 'b', 'c', 'p2'].map(key));
    expect(sut.until).toBe(768 + 32);
    expect(restoreTouchKeys(prompt(1000), sut)).toEqual([...['a', 'b', 'c'].map(key), key('p2')]);
  });

  it('reads each layer from host memory when it is there', () => {
    const [, , c] = restoreReach(table(), prompt(1000), 0).chunks;
    expect([restoreTier(c!, 0), restoreTier(c!, 1)]).toEqual(['mem', 'ssd']);
  });

  it.each<[string, number, boolean]>([
    ['a restore reading SSD is worth warming', 0, false],
    ['one from host memory alone is not', 1000 - 1000, true],
  ])('%s', (_name, _device, hostOnly) => {
    const reach = restoreReach(table(), prompt(hostOnly ? 600 : 1000), 0);
    expect(worthWarming(reach, 0)).toBe(!hostOnly);
    expect(hostResidentPrefix(reach.chunks).map((c) => c.chunkKey)).toEqual(['a', 'b'].map(key));
  });

  it('counts restored tokens by tier', () => {
    const reach = restoreReach(table(), prompt(1000), 100);
    expect(restoredTokensByTier(reach.chunks, 100, reach.until, (i) => i < 2)).toEqual({ mem: 512 - 100, ssd: 256 });
  });
});

describe(chunksCovering.name, () => {
  it.each<[string, number, number, number]>([
    ['whole chunks', 0, 512, 2],
    ['from inside the first chunk', 100, 512, 2],
    ['until inside a chunk: that chunk too', 256, 600, 2],
    ['one chunk', 300, 400, 1],
  ])('%s', (_name, from, until, n) => {
    expect(chunksCovering(['c0', 'c1', 'c2', 'c3'], from, until)).toEqual(['c0', 'c1', 'c2', 'c3'].slice(0, n));
  });
});
