import { RestoreReadSchedule, type RestoreReadOptions } from './restore-read.schedule.js';

describe(RestoreReadSchedule.name, () => {
  const MiB = 1024 * 1024;
  it.each<[string, object, number, number, number, number]>([
    // [options, layerBytes, groupLayers, aheadGroups, copyDepth]
    ['ring: a layer per read, the budget (64 MiB) in flight', {}, 4 * MiB, 1, 16, 3],
    ['ring: at least the copy depth ahead', {}, 128 * MiB, 1, 4, 3],
    ['windows: half the budget per read, two ahead', { ssdReads: 'windows' }, 4 * MiB, 8, 2, 3],
    ['a budget and copy depth of its own', { readAheadBytes: 32 * MiB, copyAheadLayers: 1 }, 4 * MiB, 1, 8, 1],
    ['no copy ahead', { copyAhead: false }, 64 * MiB, 1, 1, 0],
  ])('%s', (_name, options, layerBytes, group, ahead, depth) => {
    const sut = new RestoreReadSchedule(32, layerBytes, options);
    expect([sut.groupLayers, sut.aheadGroups, sut.copyDepth, sut.slots]).toEqual([group, ahead, depth, depth + 2]);
    expect(sut.groupOf(9)).toBe(Math.floor(9 / group));
    expect(sut.groupRange(sut.groupOf(31))).toEqual({ start: Math.floor(31 / group) * group, end: 32 });
  });

  it.each<[string, number[], number, number, number[]]>([
    // [ahead, layer loaded, copy depth, stale]
    ['nothing copied ahead', [], 4, 3, []],
    ['in order: the copies ahead stay', [5, 6, 7], 4, 3, []],
    ['the layer loaded itself is no longer ahead', [4, 5], 4, 3, [4]],
    ['a layer before the one loaded (the engine went back)', [2, 5], 4, 3, [2]],
    ['beyond the copy depth (the engine went back further)', [5, 7, 8], 4, 3, [8]],
    ['no copy depth: every copy is stale', [5], 4, 0, [5]],
  ])('stale copies: %s', (_name, ahead, layer, depth, stale) => {
    const sut = new RestoreReadSchedule(32, MiB, { copyAheadLayers: depth });
    expect(sut.staleCopies(ahead, layer)).toEqual(stale);
  });

  it.each<[string, RestoreReadOptions, number, number[], number[], number[]]>([
    // [options, layer loaded, copying already, in host, copies to start]
    ['ring: the copy depth after the layer', {}, 4, [], [], [5, 6, 7]],
    ['ring: those being copied are skipped', {}, 4, [6], [], [5, 7]],
    ['ring: not past the last layer', {}, 30, [], [], [31]],
    ['the last layer: nothing after it', {}, 31, [], [], []],
    ['no copy ahead', { copyAhead: false }, 4, [], [], []],
    ['windows: only layers all in host memory', { ssdReads: 'windows' }, 4, [], [5, 7], [5, 7]],
    ['windows: in host but being copied', { ssdReads: 'windows' }, 4, [5], [5, 6], [6]],
  ])('copies after a load: %s', (_name, options, layer, copying, inHost, want) => {
    const sut = new RestoreReadSchedule(32, MiB, options);
    expect([
      ...sut.copiesAfter(
        layer,
        (l) => copying.includes(l),
        (l) => inHost.includes(l),
      ),
    ]).toEqual(want);
  });

  it('asks about each copy after the one before started (lazily)', () => {
    const sut = new RestoreReadSchedule(32, MiB);
    // Starting layer 5's copy also starts layer 6's (say, a read group it shares): 6 is then skipped.
    const copying = new Set<number>();
    const started: number[] = [];
    for (const l of sut.copiesAfter(
      4,
      (l) => copying.has(l),
      () => true,
    )) {
      started.push(l);
      copying.add(l).add(l + 1);
    }
    expect(started).toEqual([5, 7]);
  });

  describe('startReads', () => {
    /** Reads started, each settled by the test; `none` groups have nothing to read. */
    function reads(none: number[] = []) {
      const started: number[] = [];
      const settle = new Map<number, () => void>();
      const start = (g: number) => {
        started.push(g);
        if (none.includes(g)) return undefined;
        return new Promise<void>((r) => settle.set(g, r));
      };
      const land = async (g: number) => {
        settle.get(g)!();
        await new Promise((r) => setImmediate(r));
      };
      return { started, start, land };
    }
    const sut = (options: RestoreReadOptions = {}) => new RestoreReadSchedule(8, 16 * MiB, options);

    it.each<[string, RestoreReadOptions, number[], number[][]]>([
      // [options, groups with nothing to read, started at first and after each landing of the last one started]
      ['two alone, then the rest of the budget', {}, [], [[0], [0, 1], [0, 1, 2, 3]]],
      ['one alone', { slowStartGroups: 1 }, [], [[0], [0, 1, 2, 3]]],
      ['none alone: the budget at once', { slowStartGroups: 0 }, [], [[0, 1, 2, 3]]],
      ['a first group with nothing to read: the rest at once', {}, [0], [[0, 1, 2, 3]]],
      ['a later group with nothing to read does not hold up the rest', {}, [1], [[0], [0, 1, 2, 3]]],
    ])('%s', async (_name, options, none, after) => {
      const r = reads(none);
      sut(options).startReads(0, r.start, () => false);
      expect(r.started).toEqual(after[0]);
      for (const want of after.slice(1)) {
        await r.land(r.started.at(-1)!);
        expect(r.started).toEqual(want);
      }
    });

    it('later calls start their groups at once, from the group the engine is at', () => {
      const r = reads();
      const s = sut();
      s.startReads(0, r.start, () => false);
      s.startReads(2, r.start, () => false);
      expect(r.started).toEqual([0, 2, 3, 4, 5]);
    });

    it.each<[string, boolean]>([
      ['released before the first landing: nothing more starts', true],
      ['still running: the slow start goes on', false],
    ])('%s', async (_name, released) => {
      const r = reads();
      let stopped = false;
      sut().startReads(0, r.start, () => stopped);
      stopped = released;
      await r.land(0);
      expect(r.started).toEqual(released ? [0] : [0, 1]);
    });
  });
});
