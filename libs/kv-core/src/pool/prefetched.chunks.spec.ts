import { importedChunks, PrefetchedChunks, withdrawnChunks, type ImportedChunk } from './prefetched.chunks.js';

const chunk = (key: string, position: number, stamp: number, layers = [0, 1, 2]) => ({
  model: 'm',
  key,
  position,
  layers,
  bytes: 100,
  stamp,
});
const adv = (id: string, expiresAtMs: number, priority?: number, dueMs?: number) => ({ id, expiresAtMs, priority, dueMs });
const keysOf = (ds: Array<{ key: string; layer: number }>) => ds.map((d) => `${d.key}/${d.layer}`);

describe(PrefetchedChunks.name, () => {
  let sut: PrefetchedChunks;
  beforeEach(() => {
    sut = new PrefetchedChunks();
  });

  it.each<[string, number, string[]]>([
    ['nothing needed', 0, []],
    ['one segment: the oldest advisory, its last layer, its last chunk', 1, ['a1/2']],
    ['a whole layer of the oldest before any earlier layer', 2, ['a1/2', 'a0/2']],
    ['the oldest advisory entirely before the newer one', 6, ['a1/2', 'a0/2', 'a1/1', 'a0/1', 'a1/0', 'a0/0']],
    ['then the newer one', 7, ['a1/2', 'a0/2', 'a1/1', 'a0/1', 'a1/0', 'a0/0', 'b0/2']],
    ['everything there is, when more is asked', 10_000, ['a1/2', 'a0/2', 'a1/1', 'a0/1', 'a1/0', 'a0/0', 'b0/2', 'b0/1', 'b0/0']],
  ])('purges in cooperative order: %s', (_n, segments, expected) => {
    sut.add(adv('old', 1e9), chunk('a0', 0, 10));
    sut.add(adv('old', 1e9), chunk('a1', 1, 10));
    sut.add(adv('new', 1e9), chunk('b0', 0, 20));
    expect(keysOf(sut.purge(segments * 100))).toEqual(expected);
    expect(sut.purgedSegments).toBe(expected.length);
  });

  it('never purges a chunk a request adopted', () => {
    sut.add(adv('x', 1e9), chunk('a0', 0, 10));
    sut.add(adv('x', 1e9), chunk('b0', 0, 20));
    sut.adopt(['a0']);
    expect(keysOf(sut.purge(10_000))).toEqual(['b0/2', 'b0/1', 'b0/0']);
  });

  it('forget drops what only that advisory wanted', () => {
    sut.add(adv('x', 1e9), chunk('a0', 0, 10, [0, 1]));
    sut.add(adv('y', 1e9), chunk('a0', 0, 10, [0, 1]));
    sut.add(adv('x', 1e9), chunk('b0', 1, 10, [0, 1]));
    expect(keysOf(sut.forget('x').drops)).toEqual(['b0/0', 'b0/1']);
    expect(sut.has('a0')).toBe(true);
    expect(keysOf(sut.forget('y').drops)).toEqual(['a0/0', 'a0/1']);
    expect(sut.size).toBe(0);
    expect(sut.forget('unknown').drops).toEqual([]);
  });

  it('forget skips what was purged or adopted since', () => {
    sut.add(adv('x', 1e9), chunk('a0', 0, 10, [0, 1]));
    sut.add(adv('x', 1e9), chunk('b0', 1, 10, [0, 1]));
    sut.adopt(['a0']);
    sut.purge(100);
    expect(keysOf(sut.forget('x').drops)).toEqual(['b0/0']);
  });

  it('expiry forgets advisories whose time passed', () => {
    sut.add(adv('soon', 100), chunk('a0', 0, 10, [0]));
    sut.add(adv('later', 200), chunk('b0', 0, 10, [0]));
    expect(keysOf(sut.expire(150).drops)).toEqual(['a0/0']);
    expect(sut.has('b0')).toBe(true);
  });

  it('purges a lower-priority advisory, then the one due last, before the LRU order applies', () => {
    sut.add(adv('chat', 1e9, 1), chunk('c0', 0, 30, [0]));
    sut.add(adv('hop2', 1e9, 1, 2000), chunk('h2', 0, 10, [0]));
    sut.add(adv('hop1', 1e9, 1, 1000), chunk('h1', 0, 5, [0, 1]));
    sut.add(adv('bulk', 1e9, 0, 500), chunk('b0', 0, 40, [0]));
    expect(keysOf(sut.purge(10_000))).toEqual(['b0/0', 'c0/0', 'h2/0', 'h1/1', 'h1/0']);
  });

  it('a chunk a more urgent advisory also wants is requeued under that urgency', () => {
    sut.add(adv('chat', 1e9), chunk('a0', 0, 10, [0]));
    sut.add(adv('chat', 1e9), chunk('b0', 0, 20, [0]));
    sut.add(adv('agent', 1e9, 2, 100), chunk('a0', 0, 30, []));
    expect(keysOf(sut.purge(100))).toEqual(['b0/0']);
    // The chat advisory still wants it: forgetting the agent drops nothing.
    expect(keysOf(sut.forget('agent').drops)).toEqual([]);
    expect(keysOf(sut.purge(10_000))).toEqual(['a0/0']);
  });

  describe('chunks also staged on the device', () => {
    it.each<[string, (s: PrefetchedChunks) => void, string[]]>([
      ['forget unstages them', () => undefined, ['a0']],
      ['even after their host copy was purged', (s) => void s.purge(10_000), ['a0']],
      ['not once a request adopted them', (s) => s.adopt(['a0']), []],
      ['not while another advisory wants them', (s) => s.add(adv('y', 1e9), { ...chunk('a0', 0, 10, []), onDevice: false }), []],
    ])('%s', (_name, between, unstaged) => {
      sut.add(adv('x', 1e9), { ...chunk('a0', 0, 10, [0]), onDevice: true });
      sut.add(adv('x', 1e9), chunk('b0', 1, 10, [0]));
      between(sut);
      expect(sut.forget('x').unstage.map((u) => u.key)).toEqual(unstaged);
    });

    it('expiry unstages them too', () => {
      sut.add(adv('x', 100), { ...chunk('a0', 0, 10, []), onDevice: true });
      expect(sut.expire(150)).toEqual({ drops: [], unstage: [{ model: 'm', key: 'a0' }] });
      expect(sut.size).toBe(0);
    });
  });

  describe('recordImport', () => {
    const imported = (key: string, fresh: boolean, hostLayers: number[] = [], onDevice = false): ImportedChunk => ({
      key,
      position: 0,
      fresh,
      hostLayers,
      onDevice,
    });

    it.each<[string, ImportedChunk[], { chunks: number; segments: number }, string[], string[]]>([
      ['a fresh chunk that landed: prefetched', [imported('a', true, [0, 1])], { chunks: 1, segments: 2 }, ['a'], ['a']],
      ['staged on the device alone: prefetched, no segment', [imported('a', true, [], true)], { chunks: 1, segments: 0 }, ['a'], ['a']],
      ['a fresh chunk that did not land: nothing', [imported('a', true)], { chunks: 0, segments: 0 }, [], []],
      ['here already, nobody prefetched it: landed only', [imported('a', false, [0, 1, 2])], { chunks: 0, segments: 0 }, [], ['a']],
      ['here already, another advisory prefetched it: shared', [imported('b', false, [0, 1, 2])], { chunks: 0, segments: 0 }, ['b'], ['b']],
    ])('%s', (_name, chunks, got, known, landed) => {
      sut.add(adv('other', 1e9), chunk('b', 0, 5, [0]));
      expect(sut.recordImport(adv('x', 1e9), { model: 'm', bytes: 100, stamp: 10 }, chunks)).toEqual(got);
      // What x holds once the other advisory is gone.
      sut.forget('other');
      expect(['a', 'b'].filter((k) => sut.has(k))).toEqual(known);
      expect([...sut.landed('x')]).toEqual(landed);
    });

    it('records fresh chunks before those that were here', () => {
      sut.add(adv('other', 1e9), chunk('b', 0, 5, []));
      sut.recordImport(adv('x', 1e9), { model: 'm', bytes: 100, stamp: 10 }, [imported('b', false), imported('a', true, [0])]);
      expect([...sut.landed('x')]).toEqual(['a', 'b']);
    });
  });
});

describe(importedChunks.name, () => {
  const chunks = [
    { key: 'a', position: 0 },
    { key: 'b', position: 1 },
    { key: 'c', position: 2 },
  ];
  it.each<[string, string[], string[], Record<string, number[]>, Array<Pick<ImportedChunk, 'fresh' | 'hostLayers' | 'onDevice'>>]>([
    [
      'nothing fresh: none has host layers of this import',
      [],
      [],
      { a: [0, 1] },
      [
        { fresh: false, hostLayers: [], onDevice: false },
        { fresh: false, hostLayers: [], onDevice: false },
        { fresh: false, hostLayers: [], onDevice: false },
      ],
    ],
    [
      'fresh ones with what landed in the host pool, in import order',
      ['a', 'c'],
      [],
      { a: [0, 1], c: [] },
      [
        { fresh: true, hostLayers: [0, 1], onDevice: false },
        { fresh: false, hostLayers: [], onDevice: false },
        { fresh: true, hostLayers: [], onDevice: false },
      ],
    ],
    [
      'staged on the device, fresh or not',
      ['a'],
      ['a', 'b'],
      { a: [] },
      [
        { fresh: true, hostLayers: [], onDevice: true },
        { fresh: false, hostLayers: [], onDevice: true },
        { fresh: false, hostLayers: [], onDevice: false },
      ],
    ],
  ])('%s', (_name, fresh, staged, host, want) => {
    const got = importedChunks(chunks, new Set(fresh), new Set(staged), (key) => host[key] ?? []);
    expect(got).toEqual(want.map((w, i) => ({ ...chunks[i], ...w })));
  });
});

describe('PrefetchedChunks.heldFor', () => {
  it.each<[string, string[], string[], number]>([
    // [in the host pool, adopted since, held]
    ['every chunk landed still in the host pool', ['a', 'b', 'c'], [], 3],
    ['one gone from the host pool', ['a', 'b'], [], 2],
    ['gone from the host pool but staged on the device', ['a'], [], 2],
    ['staged, then adopted by a request: no longer counted as staged', ['a'], ['b'], 1],
  ])('%s', (_name, onHost, adopted, held) => {
    const sut = new PrefetchedChunks();
    sut.add(adv('x', 1e9), chunk('a', 0, 10));
    sut.add(adv('x', 1e9), { ...chunk('b', 1, 10, []), onDevice: true });
    sut.landedFor(adv('x', 1e9), 'c');
    sut.adopt(adopted);
    expect(sut.heldFor('x', (key) => onHost.includes(key))).toBe(held);
  });

  it('an advisory never seen holds nothing', () => {
    expect(new PrefetchedChunks().heldFor('nope', () => true)).toBe(0);
  });
});

describe(withdrawnChunks.name, () => {
  it.each<[string, string[], string[], number]>([
    ['nothing', [], [], 0],
    ['host layers of one chunk count once', ['a', 'a', 'b'], [], 2],
    ['a chunk both dropped and unstaged counts once', ['a'], ['a', 'c'], 2],
  ])('%s', (_name, drops, unstage, n) => {
    const w = { drops: drops.map((key, layer) => ({ model: 'm', key, layer })), unstage: unstage.map((key) => ({ model: 'm', key })) };
    expect(withdrawnChunks(w)).toBe(n);
  });
});
