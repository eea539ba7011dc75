// Unified pooling placement on real devices: two SSD pools whose bandwidths are 3:1 get a
// request's segments 3:1, every layer striped over both, and one layer-wise read is served by
// both devices at once (one transfer spanning both workers).
import { join } from 'node:path';
import { chunkKeys } from '@mnemo/kv-core';
import type { SsdPoolDevice } from '@mnemo/native-cuda';
import { RestoreReader } from './restore.reader.js';
import { openTiers, scratchDirEach, strictWriter } from '../../test/kv-store.fixture.js';
import { smallPoolSettings } from '../../test/pool-settings.fixture.js';

const G = { layers: 4, rowElems: 8 };

describe('bandwidth-proportional placement over pool devices', () => {
  const scratch = scratchDirEach('mnemo-placement-');

  it('splits segments 3:1 over devices of bandwidth 3:1 and reads each layer from both', async () => {
    const dir = scratch();
    const { tiers, close } = await openTiers(
      {
        ...smallPoolSettings(dir, { hostBytes: 0, ssdBytes: 0 }),
        ssdPools: [0, 1].map((i) => ({ path: join(dir, `ssd-${i}.pool`), bytes: 8 * 1024 * 1024 })),
        bandwidths: [3e9, 1e9],
      },
      'm',
      G,
    );
    const writer = strictWriter(tiers);
    const keys = chunkKeys(
      'm',
      't',
      Array.from({ length: 8 * 256 }, (_, i) => i % 200),
    );
    await writer.write(
      'm',
      keys.map((key, position) => ({ key, position, payload: new Float32Array(G.layers * 2 * 256 * G.rowElems).fill(position) })),
    );
    await writer.drain();

    const m = tiers.model('m');
    const onDevice = (layer?: number) =>
      [0, 1].map(
        (d) => [...m.table.entries('ssd')].filter((e) => e.location.deviceIndex === d && (layer === undefined || e.layer === layer)).length,
      );
    expect(onDevice()).toEqual([24, 8]);
    for (let l = 0; l < G.layers; l++) expect(onDevice(l)).toEqual([6, 2]);

    const ssd = tiers.devices.map((d) => d.device as SsdPoolDevice);
    const before = ssd.map((d) => d.stats().bytesRead);
    const reader = new RestoreReader(tiers, m, m.table.longestPrefix(keys), 0, 8 * 256 - 1);
    for (let l = 0; l < G.layers; l++) await reader.load(l);
    reader.release();
    const read = ssd.map((d, i) => d.stats().bytesRead - before[i]!);
    expect(read[0]).toBe(24 * m.segBytes);
    expect(read[1]).toBe(8 * m.segBytes);

    await close();
  });
});
