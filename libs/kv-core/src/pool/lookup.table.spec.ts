import { LookupTable } from './lookup.table.js';
import type { PoolTier, SegmentLocation } from './pool.types.js';

const L = 4;
const key = (i: number): string => i.toString(16).padStart(32, '0');
const loc = (type: PoolTier, offset: number, length = 100, deviceIndex = 0): SegmentLocation => ({
  deviceIndex,
  type,
  offset,
  length,
  crc32c: 0xdeadbeef,
});

/** Puts layers `layers` of chunk i (position i) into `tier`, offsets i*100+layer. */
function putChunk(sut: LookupTable, i: number, tier: PoolTier, now: number, layers: number[] = [0, 1, 2, 3]): void {
  for (const layer of layers) sut.put({ chunkKey: key(i), position: i, layer }, loc(tier, (i * 100 + layer) * 4096), now);
}

describe(LookupTable.name, () => {
  describe('put, find, remove', () => {
    it('finds replicas fastest tier first whatever the order they arrived in', () => {
      const sut = new LookupTable({ numLayers: L });
      sut.put({ chunkKey: key(1), position: 0, layer: 2 }, loc('ssd', 8192), 5);
      sut.put({ chunkKey: key(1), position: 0, layer: 2 }, loc('mem', 64), 6);
      expect(sut.find(key(1), 2).map((l) => [l.type, l.offset])).toEqual([
        ['mem', 64],
        ['ssd', 8192],
      ]);
      expect(sut.get(key(1), 2, 'ssd')).toEqual(loc('ssd', 8192));
      expect(sut.find(key(1), 1)).toEqual([]);
      expect(sut.find(key(9), 2)).toEqual([]);
      expect(sut.lastAccess(key(1))).toBe(6);
      sut.checkInvariant();
    });

    const bad: Array<[string, (s: LookupTable) => void, RegExp | typeof RangeError]> = [
      ['a second replica in the same tier', (s) => s.put({ chunkKey: key(1), position: 1, layer: 0 }, loc('mem', 0), 1), /already holds/],
      ['the same key at another position', (s) => s.put({ chunkKey: key(1), position: 2, layer: 3 }, loc('ssd', 0), 1), /position/],
      ['a key that is not 32 hex chars', (s) => s.put({ chunkKey: 'abc', position: 0, layer: 0 }, loc('mem', 0), 1), RangeError],
      ['a layer past the model', (s) => s.put({ chunkKey: key(2), position: 0, layer: L }, loc('mem', 0), 1), RangeError],
      ['a negative offset', (s) => s.put({ chunkKey: key(2), position: 0, layer: 0 }, loc('mem', -4096), 1), RangeError],
      ['an empty segment', (s) => s.put({ chunkKey: key(2), position: 0, layer: 0 }, loc('mem', 0, 0), 1), RangeError],
      [
        'a CRC beyond 32 bits',
        (s) => s.put({ chunkKey: key(2), position: 0, layer: 0 }, { ...loc('mem', 0), crc32c: 2 ** 32 }, 1),
        RangeError,
      ],
      [
        'an unknown tier',
        (s) => s.put({ chunkKey: key(2), position: 0, layer: 0 }, { ...loc('mem', 0), type: 'tape' as PoolTier }, 1),
        RangeError,
      ],
      ['a NaN stamp', (s) => s.put({ chunkKey: key(2), position: 0, layer: 0 }, loc('mem', 0), NaN), RangeError],
      ['a negative position', (s) => s.put({ chunkKey: key(2), position: -1, layer: 0 }, loc('mem', 0), 1), RangeError],
    ];
    it.each(bad)('rejects %s and changes nothing', (_name, act, error) => {
      const sut = new LookupTable({ numLayers: L });
      sut.put({ chunkKey: key(1), position: 1, layer: 0 }, loc('mem', 0), 1);
      expect(() => act(sut)).toThrow(error);
      expect(sut.chunkCount).toBe(1);
      expect(sut.stats('mem')).toEqual({ segments: 1, bytes: 100 });
      expect(sut.stats('ssd')).toEqual({ segments: 0, bytes: 0 });
      sut.checkInvariant();
    });

    it('removes a replica, keeps the other tier, and forgets an empty chunk', () => {
      const sut = new LookupTable({ numLayers: L });
      putChunk(sut, 1, 'mem', 1, [0]);
      putChunk(sut, 1, 'ssd', 1, [0]);
      expect(sut.remove(key(1), 0, 'mem')).toEqual({
        chunkKey: key(1),
        layer: 0,
        tier: 'mem',
        location: loc('mem', 400 * 1024),
        deferred: false,
      });
      expect(sut.remove(key(1), 0, 'mem')).toBeNull();
      expect(sut.find(key(1), 0).map((l) => l.type)).toEqual(['ssd']);
      sut.remove(key(1), 0, 'ssd');
      expect(sut.chunkCount).toBe(0);
      sut.checkInvariant();
    });

    it('removeChunk takes every replica of every tier', () => {
      const sut = new LookupTable({ numLayers: L });
      putChunk(sut, 1, 'mem', 1, [0, 1]);
      putChunk(sut, 1, 'ssd', 1);
      expect(sut.removeChunk(key(1)).map((r) => `${r.tier}${r.layer}`)).toEqual(['mem0', 'mem1', 'ssd0', 'ssd1', 'ssd2', 'ssd3']);
      expect(sut.chunkCount).toBe(0);
    });

    it('answers chunk-level views per tier', () => {
      const sut = new LookupTable({ numLayers: L });
      putChunk(sut, 1, 'mem', 1, [0, 2]);
      putChunk(sut, 1, 'ssd', 1);
      expect(sut.layersIn(key(1), 'mem')).toEqual([0, 2]);
      expect(sut.layersIn(key(1), 'ssd')).toEqual([0, 1, 2, 3]);
      expect(sut.layersIn(key(7), 'ssd')).toEqual([]);
      expect([sut.holdsChunk(key(1), 'mem'), sut.holdsChunk(key(1), 'ssd'), sut.holdsChunk(key(7), 'ssd')]).toEqual([false, true, false]);
      expect(sut.stats('ssd')).toEqual({ segments: 4, bytes: 400 });
    });
  });

  describe('longestPrefix', () => {
    type Setup = (s: LookupTable) => void;
    const cases: Array<[string, Setup, number[], number]> = [
      ['every chunk whole in the host pool', (s) => [0, 1, 2].forEach((i) => putChunk(s, i, 'mem', 1)), [0, 1, 2], 3],
      [
        'stops at the first chunk with a layer held nowhere',
        (s) => {
          [0, 1].forEach((i) => putChunk(s, i, 'mem', 1));
          putChunk(s, 2, 'ssd', 1, [0, 1, 2]);
          putChunk(s, 3, 'ssd', 1);
        },
        [0, 1, 2, 3],
        2,
      ],
      [
        'a chunk split across tiers counts as whole',
        (s) => {
          putChunk(s, 0, 'mem', 1, [0, 1]);
          putChunk(s, 0, 'ssd', 1, [2, 3]);
        },
        [0],
        1,
      ],
      ['an unknown first chunk: nothing', (s) => putChunk(s, 1, 'mem', 1), [0, 1], 0],
      [
        'a referenced chunk with no data stops the prefix',
        (s) => {
          putChunk(s, 0, 'mem', 1);
          s.ref(key(1), 1);
          putChunk(s, 2, 'mem', 1);
        },
        [0, 1, 2],
        1,
      ],
      ['an empty chain', () => undefined, [], 0],
    ];
    it.each(cases)('%s', (_name, setup, chain, expected) => {
      const sut = new LookupTable({ numLayers: L });
      setup(sut);
      expect(sut.longestPrefix(chain.map(key)).map((c) => c.chunkKey)).toEqual(chain.slice(0, expected).map(key));
    });

    it('says per layer where to read from', () => {
      const sut = new LookupTable({ numLayers: L });
      putChunk(sut, 0, 'mem', 1, [0, 1]);
      putChunk(sut, 0, 'ssd', 1, [1, 2, 3]);
      const [chunk] = sut.longestPrefix([key(0)]);
      expect(chunk!.position).toBe(0);
      expect(chunk!.mem.map((l) => l?.type)).toEqual(['mem', 'mem', undefined, undefined]);
      expect(chunk!.ssd.map((l) => l?.type)).toEqual([undefined, 'ssd', 'ssd', 'ssd']);
      // A copy: later changes to the table do not rewrite an answer already given.
      sut.remove(key(0), 0, 'mem');
      expect(chunk!.mem[0]?.type).toBe('mem');
    });
  });

  describe('references and pins', () => {
    it('counts references and keeps a referenced chunk known with no data', () => {
      const sut = new LookupTable({ numLayers: L });
      expect(sut.ref(key(1), 3)).toBe(1);
      expect(sut.ref(key(1), 3)).toBe(2);
      expect(() => sut.ref(key(1), 4)).toThrow(/position/);
      expect(sut.unref(key(1))).toBe(1);
      expect(sut.chunkCount).toBe(1);
      expect(sut.unref(key(1))).toBe(0);
      expect(sut.chunkCount).toBe(0);
      expect(() => sut.unref(key(1))).toThrow(/unreferenced/);
      sut.checkInvariant();
    });

    it('defers freeing a pinned replica and hands its location back on the last unpin', () => {
      const sut = new LookupTable({ numLayers: L });
      putChunk(sut, 1, 'ssd', 1, [0]);
      const a = sut.pin(key(1), 0, 'ssd')!;
      const b = sut.pin(key(1), 0, 'ssd')!;
      expect(a.location).toEqual(loc('ssd', 400 * 1024));
      expect(sut.remove(key(1), 0, 'ssd')).toMatchObject({ deferred: true });
      expect(sut.find(key(1), 0)).toEqual([]);
      expect(sut.stats('ssd')).toEqual({ segments: 0, bytes: 0 });
      sut.checkInvariant();
      expect(sut.unpin(a)).toBeNull();
      expect(sut.unpin(b)).toEqual(loc('ssd', 400 * 1024));
      expect(() => sut.unpin(b)).toThrow(/twice/);
      sut.checkInvariant();
    });

    it('lets a new replica take the slot while the removed one is still pinned', () => {
      const sut = new LookupTable({ numLayers: L });
      putChunk(sut, 1, 'mem', 1, [0]);
      const pin = sut.pin(key(1), 0, 'mem')!;
      sut.remove(key(1), 0, 'mem');
      sut.put({ chunkKey: key(1), position: 1, layer: 0 }, loc('mem', 0), 2);
      expect(sut.unpin(pin)).toEqual(loc('mem', 400 * 1024));
      expect(sut.get(key(1), 0, 'mem')).toEqual(loc('mem', 0));
      sut.checkInvariant();
    });

    it('pins nothing that is not there and refuses foreign handles', () => {
      const sut = new LookupTable({ numLayers: L });
      expect(sut.pin(key(1), 0, 'mem')).toBeNull();
      expect(() => sut.unpin({ chunkKey: key(1), layer: 0, location: loc('mem', 0) })).toThrow(TypeError);
    });
  });

  it.each([
    ['zero layers', { numLayers: 0 }],
    ['a TTL of 0', { numLayers: 1, ttlMs: 0 }],
    ['a NaN TTL', { numLayers: 1, ttlMs: NaN }],
  ])('rejects options with %s', (_name, options) => {
    expect(() => new LookupTable(options)).toThrow(RangeError);
  });
});
