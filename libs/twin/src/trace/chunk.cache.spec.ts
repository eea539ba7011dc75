import { ChunkCache } from './chunk.cache.js';

describe(ChunkCache.name, () => {
  it.each([
    {
      name: 'holds what fits and evicts the least recently used request, its later chunks first',
      host: 4,
      ssd: 0,
      uses: [
        [['a0', 'a1', 'a2'], 1],
        [['b0', 'b1'], 2],
      ] as const,
      probe: [
        [
          ['a0', 'a1', 'a2'],
          ['host', 'host'],
        ],
        [
          ['b0', 'b1'],
          ['host', 'host'],
        ],
      ] as const,
    },
    {
      name: 'a touch makes an older request the newer one',
      host: 4,
      ssd: 0,
      uses: [
        [['a0', 'a1'], 1],
        [['b0', 'b1'], 2],
        [['a0', 'a1'], 3],
        [['c0'], 4],
      ] as const,
      probe: [
        [
          ['a0', 'a1'],
          ['host', 'host'],
        ],
        [['b0', 'b1'], ['host']],
        [['c0'], ['host']],
      ] as const,
    },
    {
      name: 'DRAM overflow moves to SSD, and SSD overflow is dropped',
      host: 2,
      ssd: 1,
      uses: [
        [['a0', 'a1'], 1],
        [['b0', 'b1'], 2],
      ] as const,
      probe: [
        [['a0', 'a1'], ['ssd']],
        [
          ['b0', 'b1'],
          ['host', 'host'],
        ],
      ] as const,
    },
    {
      name: 'a chunk read from SSD comes back to DRAM',
      host: 2,
      ssd: 2,
      uses: [
        [['a0', 'a1'], 1],
        [['b0', 'b1'], 2],
        [['a0'], 3],
      ] as const,
      probe: [
        [
          ['a0', 'a1'],
          ['host', 'ssd'],
        ],
        // DRAM overflowed by a0: the older request b loses its later chunk to SSD.
        [
          ['b0', 'b1'],
          ['host', 'ssd'],
        ],
      ] as const,
    },
    { name: 'no DRAM holds nothing', host: 0, ssd: 4, uses: [[['a0'], 1]] as const, probe: [[['a0'], []]] as const },
  ])('$name', ({ host, ssd, uses, probe }) => {
    const cache = new ChunkCache(host, ssd);
    for (const [keys, stamp] of uses) cache.use(keys, stamp);
    for (const [keys, tiers] of probe) expect(cache.prefix(keys)).toEqual(tiers);
    expect(cache.size.host).toBeLessThanOrEqual(host);
    expect(cache.size.ssd).toBeLessThanOrEqual(ssd);
  });

  it('a prefix stops at the first missing chunk', () => {
    const cache = new ChunkCache(8);
    cache.use(['a0', 'a1', 'a2'], 1);
    expect(cache.prefix(['a0', 'x', 'a2'])).toEqual(['host']);
  });
});
