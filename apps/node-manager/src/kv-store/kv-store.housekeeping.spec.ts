// KvStore housekeeping (SSD expiry, journal flush and compaction) runs from a timer: a pass still
// running when the next one is due must be joined, not doubled, and close() must wait for it —
// otherwise a compaction can rewrite (and reopen) the journal under a store that closed.
// Real pool devices and journal files; the compaction is slowed down to make the race certain.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ReferenceEngine } from '@mnemo/engine';
import { KvStore } from './kv.store.js';

const MiB = 1024 * 1024;

describe(`${KvStore.name} housekeeping`, () => {
  let dir: string;
  let engine: ReferenceEngine;
  let sut: KvStore;
  let running = 0;
  let most = 0;
  let passes = 0;
  const events: string[] = [];

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mnemo-housekeeping-'));
    engine = await ReferenceEngine.create({ models: ['mnemo-tiny'], backend: 'cpu', kvBlocks: 64 });
    sut = (await KvStore.open(
      {
        enabled: true,
        dataDir: dir,
        hostBytes: 4 * MiB,
        hostDevices: 1,
        ssdPools: [{ path: join(dir, 'ssd-0.pool'), bytes: 16 * MiB }],
        bandwidths: [10e9, 2e9],
        ssdTtlMs: 3_600_000,
        ioBackend: 'auto',
        eventsMs: 50,
      },
      engine,
      () => undefined,
      () => undefined,
    ))!;
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
  afterEach(async () => {
    await engine.close();
    await rm(dir, { recursive: true, force: true });
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
