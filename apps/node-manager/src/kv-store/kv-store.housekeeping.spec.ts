// KvStore housekeeping (SSD expiry, journal flush and compaction) runs from a timer: a pass still
// running when the next one is due must be joined, not doubled, and close() must wait for it —
// otherwise a compaction can rewrite (and reopen) the journal under a store that closed.
// Real pool devices and journal files; the compaction is slowed down to make the race certain.
import { openStoreRig, removeDir, type StoreRig } from '../../test/kv-store.fixture.js';
import { KvStore } from './kv.store.js';

const MiB = 1024 * 1024;

describe(`${KvStore.name} housekeeping`, () => {
  let rig: StoreRig;
  let sut: KvStore;
  let running = 0;
  let most = 0;
  let passes = 0;
  const events: string[] = [];

  beforeEach(async () => {
    rig = await openStoreRig('mnemo-housekeeping-', { models: ['mnemo-tiny'], kvBlocks: 64 }, { hostBytes: 4 * MiB });
    sut = rig.store;
    running = most = passes = 0;
    events.length = 0;
    const compact = sut.tiers.compactJournals.bind(sut.tiers);
    sut.tiers.compactJournals = async () => {
      most = Math.max(most, ++running);
      passes++;
      await new Promise((r) => setTimeout(r, 100));
      await compact();
      running--;
      events.push('compacted');
    };
  });
  // Each test closes (or aborts) the store itself.
  afterEach(async () => {
    await rig.engine.close();
    await removeDir(rig.dir);
  });

  it('joins a pass that is still running instead of starting another', async () => {
    await Promise.all([sut.housekeeping(), sut.housekeeping(), sut.housekeeping()]);
    expect({ most, passes }).toEqual({ most: 1, passes: 1 });
    await sut.housekeeping();
    expect(passes).toBe(2);
    await sut.close();
  });

  it.each(['close', 'abort'] as const)('%s waits for the pass in flight, and none starts after', async (how) => {
    void sut.housekeeping();
    await new Promise((r) => setTimeout(r, 10));
    await sut[how]().then(() => events.push(how));
    expect(events).toEqual(['compacted', how]);
    await sut.housekeeping();
    expect(passes).toBe(1);
  });
});
