import { ElasticCacheCoordinator, type ElasticModelSpec } from './elastic-cache.coordinator.js';
import { blockElements } from './elastic-unit.math.js';

// chat: 3 layers (BE 3072), code: 2 layers (BE 2048) → one unit = 6144 elements = 2 chat blocks = 3 code blocks.
const chat: ElasticModelSpec = { id: 'chat', shape: { layers: 3, kvHeads: 2, headDim: 16, blockTokens: 16 } };
const code: ElasticModelSpec = { id: 'code', shape: { layers: 2, kvHeads: 2, headDim: 16, blockTokens: 16 } };
const UNIT = 6144;
const WINDOW = 1000;

/** 4 node units each: chat region 8 blocks (128 tokens), code region 12 blocks (192 tokens). */
function setup() {
  const regions = ElasticCacheCoordinator.splitBudget([chat, code], 8 * UNIT)!;
  return ElasticCacheCoordinator.withRegions([chat, code], regions, WINDOW);
}

describe(ElasticCacheCoordinator.name, () => {
  it.each([
    ['too small for one unit each', UNIT, null],
    ['one unit each', 2 * UNIT, { chat: 2, code: 3 }],
    ['remainder below a unit each is left unused', 5 * UNIT + 100, { chat: 4, code: 6 }],
  ])('splitBudget: %s', (_n, budget, expected) => {
    expect(ElasticCacheCoordinator.splitBudget([chat, code], budget)).toEqual(expected);
  });

  it.each([
    ['no demand: no master', [], null],
    [
      'demand within every region: no master',
      [
        ['chat', 128],
        ['code', 192],
      ],
      null,
    ],
    ['chat over its region', [['chat', 129]], 'chat'],
    ['code over its region', [['code', 300]], 'code'],
    [
      'both over: the larger deficit in memory wins',
      [
        ['chat', 160],
        ['code', 300],
      ],
      'code',
    ],
  ] as Array<[string, Array<[string, number]>, string | null]>)('elects the master from demand: %s', (_n, demands, master) => {
    const sut = setup();
    for (const [id, tokens] of demands) sut.observe(id, 0, tokens);
    sut.tick(1);
    expect(sut.master).toBe(master);
    sut.checkInvariant();
  });

  it('an idle worker lends whole units, only as many as the master lacks', () => {
    const sut = setup();
    sut.observe('chat', 0, 128 + 20); // 2 blocks short → one unit (2 chat blocks)
    expect(sut.tick(1)).toBe(2);
    expect(sut.state('code')).toMatchObject({ role: 'worker', ownedBlocks: 9, lentBlocks: 3, lentUnits: 1, resizeEvents: 1 });
    expect(sut.state('chat')).toMatchObject({ role: 'master', ownedBlocks: 8, borrowedBlocks: 2, borrowedUnits: 1, resizeEvents: 1 });
    expect(sut.tick(2)).toBe(0); // demand met: nothing more
    sut.checkInvariant();
  });

  it('a worker keeps what its recent requests needed (SCALEDOWN window)', () => {
    const sut = setup();
    sut.observe('code', 0, 9 * 16 + 1); // code needs 10 of its 12 blocks → less than a unit spare
    sut.observe('chat', 0, 10_000);
    expect(sut.tick(10)).toBe(0);
    sut.observe('chat', WINDOW, 10_000);
    expect(sut.tick(WINDOW + 1)).toBe(8); // the window forgot code's request: all 4 units go
    expect(sut.state('code').ownedBlocks).toBe(0);
  });

  it('lent blocks are never visible to the lender: its cache cannot allocate them', () => {
    const sut = setup();
    sut.observe('chat', 0, 10_000);
    sut.tick(1);
    const own = sut.ownBlocks('code');
    expect(own.capacity).toBe(0);
    expect(own.allocate(1)).toBeNull();
    sut.observe('code', 2, 16 * 3);
    expect(sut.reclaimFor('code', 16 * 3)).toEqual({ ok: true, workerBlocks: 3, masterBlocks: 2 });
    expect(own.allocate(4)).toBeNull();
    const ids = own.allocate(3)!;
    const lent = sut.borrowedBlocks('code');
    // The worker's blocks and the master's borrowed blocks occupy disjoint element ranges of the region.
    const workerEnd = (Math.max(...ids) + 1) * blockElements(code.shape);
    for (let b = 0; b < lent.capacity; b++) expect(sut.lentBlockOffset('code', b)).toBeGreaterThanOrEqual(workerEnd);
    expect(sut.lentBlockOffset('code', lent.capacity - 1)).toBe(workerEnd);
    sut.checkInvariant();
  });

  it('reclaim fails and changes nothing while the master holds those blocks, then succeeds', () => {
    const sut = setup();
    sut.observe('chat', 0, 10_000);
    sut.tick(1);
    const lent = sut.borrowedBlocks('code');
    const held = lent.allocate(lent.capacity)!;
    const before = sut.state('code');
    expect(sut.reclaimFor('code', 16)).toEqual({ ok: false, reason: 'master_blocks_in_use', masterBlocks: 2 });
    expect(sut.state('code')).toEqual(before);
    lent.release(held);
    expect(sut.reclaimFor('code', 16)).toMatchObject({ ok: true, workerBlocks: 3 });
    sut.checkInvariant();
  });

  it('a worker whose tail blocks are in use lends only the idle units below them', () => {
    const sut = setup();
    const own = sut.ownBlocks('code');
    own.allocate(12); // code fills its region…
    own.release([0, 1, 2, 3, 4, 5, 6, 7, 8]); // …and still holds its last 3 blocks
    sut.observe('chat', 0, 10_000);
    expect(sut.tick(1)).toBe(0);
    expect(sut.state('code').lentBlocks).toBe(0);
  });

  it('the master is not re-elected while anything is lent, and is once all comes back', () => {
    const sut = setup();
    sut.observe('chat', 0, 10_000);
    sut.tick(1);
    sut.observe('code', 2000, 100_000);
    sut.tick(2001);
    expect(sut.master).toBe('chat');
    expect(sut.reclaimFor('code', 100_000)).toMatchObject({ ok: true, workerBlocks: 12 });
    sut.tick(2002);
    expect(sut.master).toBe('code');
    sut.checkInvariant();
  });

  it('two workers lend to one master; reclaiming from one leaves the other’s loan and blocks alone', () => {
    const wide: ElasticModelSpec = { id: 'wide', shape: { layers: 2, kvHeads: 4, headDim: 16, blockTokens: 16 } }; // BE 4096
    const sut = ElasticCacheCoordinator.withRegions([chat, code, wide], { chat: 4, code: 6, wide: 6 }, WINDOW);
    sut.observe('chat', 0, 10_000);
    // Units differ per pair: code lends 2 × (3 code → 2 chat), wide lends 2 × (3 wide → 4 chat).
    expect(sut.tick(1)).toBe(4 + 8);
    expect(sut.unit('wide')).toEqual({ elements: 12288, masterBlocks: 4, workerBlocks: 3 });
    const state = (id: string) => sut.state(id);
    expect([state('code').lentBlocks, state('wide').lentBlocks, state('chat').borrowedBlocks]).toEqual([6, 6, 12]);
    expect(state('chat').borrowedUnits).toBe(4);
    const wideLent = sut.borrowedBlocks('wide');
    const held = wideLent.allocate(wideLent.capacity)!;
    expect(sut.reclaimFor('code', 16 * 6)).toMatchObject({ ok: true, workerBlocks: 6 });
    expect([state('code').lentBlocks, state('wide').lentBlocks, state('chat').borrowedBlocks]).toEqual([0, 6, 8]);
    expect(wideLent.refCount(held[0]!)).toBe(1);
    sut.checkInvariant();
  });

  it.each([
    ['unknown model', () => setup().observe('nope', 0, 1)],
    ['model listed twice', () => ElasticCacheCoordinator.withRegions([chat, chat], { chat: 2 }, WINDOW)],
    ['missing region', () => ElasticCacheCoordinator.withRegions([chat, code], { chat: 2 }, WINDOW)],
    ['no models', () => new ElasticCacheCoordinator([], WINDOW)],
  ])('rejects %s', (_n, f) => {
    expect(f).toThrow(RangeError);
  });

  describe("lendTo 'cache': the master's own cache grows on lent bytes", () => {
    const cacheSetup = () => ElasticCacheCoordinator.withRegions([chat, code], { chat: 8, code: 12 }, WINDOW, 'cache');

    it('lending grows the master at its end by the same bytes the worker gives up', () => {
      const sut = cacheSetup();
      sut.observe('chat', 0, 16 * 12); // 4 chat blocks over its region → 2 units
      expect(sut.tick(1)).toBe(4);
      expect(sut.ownBlocks('chat').capacity).toBe(12);
      expect(sut.ownBlocks('code').capacity).toBe(6);
      expect(sut.state('chat')).toMatchObject({ role: 'master', ownedBlocks: 8, borrowedBlocks: 4, borrowedUnits: 2 });
      expect(sut.state('code')).toMatchObject({ lentBlocks: 6, lentUnits: 2 });
      sut.checkInvariant();
    });

    it.each([
      // name, blocks the master holds at its end, worker demand tokens, expected result, master capacity after
      ['master tail idle: reclaim shrinks it', 0, 16 * 7, { ok: true, workerBlocks: 3, masterBlocks: 2 }, 10],
      [
        'master holds its last blocks: refused, nothing changes',
        2,
        16 * 7,
        { ok: false, reason: 'master_blocks_in_use', masterBlocks: 2 },
        12,
      ],
      ['demand fits the worker: nothing to reclaim', 0, 16 * 6, { ok: true, workerBlocks: 0, masterBlocks: 0 }, 12],
      ['reclaim everything lent', 0, 16 * 12, { ok: true, workerBlocks: 6, masterBlocks: 4 }, 8],
    ])('reclaim: %s', (_n, held, tokens, expected, masterAfter) => {
      const sut = cacheSetup();
      sut.observe('chat', 0, 16 * 12);
      sut.tick(1);
      const master = sut.ownBlocks('chat');
      if (held > 0) {
        const ids = master.allocate(master.capacity)!;
        master.release(ids.filter((id) => id < master.capacity - held));
      }
      expect(sut.reclaimFor('code', tokens)).toEqual(expected);
      expect(master.capacity).toBe(masterAfter);
      sut.checkInvariant();
    });
  });
});
