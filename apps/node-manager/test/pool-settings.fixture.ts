// Store settings small enough for unit tests: one host pool device and one SSD pool file under
// `dir`, fixed bandwidths 10:2 (no probe), a TTL no test reaches.
import { join } from 'node:path';
import type { KvStoreSettings } from '../src/config/kv-store.settings.js';

export function smallPoolSettings(dir: string, sizes: { hostBytes: number; ssdBytes: number }): KvStoreSettings {
  return {
    enabled: true,
    dataDir: dir,
    hostBytes: sizes.hostBytes,
    hostDevices: 1,
    ssdPools: [{ path: join(dir, 'ssd-0.pool'), bytes: sizes.ssdBytes }],
    bandwidths: [10, 2],
    ssdTtlMs: 3_600_000,
    ioBackend: 'auto',
    eventsMs: 50,
  };
}
