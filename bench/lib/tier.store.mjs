// The KV store's real offload tiers holding one conversation at a time, for the tier benchmarks:
// puts through TierWriter (host write-through, SSD write-behind), gets through RestoreReader
// layer by layer, CRC32C-checked, exactly as a node runs them.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chunkKeys, leadingLayers } from '@mnemo/kv-core';
import { allocHostBuffer, freeHostBuffer } from '@mnemo/native-cuda';
import { OffloadTiers } from '../../apps/node-manager/dist/kv-store/offload.tiers.js';
import { closePoolDevices, openPoolDevices } from '../../apps/node-manager/dist/kv-store/pool.devices.js';
import { RestoreReader } from '../../apps/node-manager/dist/kv-store/restore.reader.js';
import { TierWriter } from '../../apps/node-manager/dist/kv-store/tier.writer.js';

const MiB = 2 ** 20;

/** Seconds `fn` took. */
export async function timed(fn) {
  const t0 = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

/**
 * One conversation of the store: its chunks, fresh keys per salt (a put never finds them stored).
 * `buffers` (one per chunk): the payloads are written into them, as a node exports chunks into
 * pooled host buffers (ChunkExports); without them each payload is a fresh array.
 * @param {{ model: string, geometry: { layers: number, rowElems: number }, chunks: number }} o
 * @param {ArrayBuffer[]} [buffers]
 */
export function conversation(o, salt, buffers) {
  const chunkBytes = o.geometry.layers * 2 * 256 * o.geometry.rowElems * 4;
  const keys = chunkKeys(
    o.model,
    `bench-${salt}`,
    Array.from({ length: o.chunks * 256 }, (_, i) => (i * 31 + salt) % 50_000),
  );
  return keys.map((key, position) => ({
    key,
    position,
    payload: (buffers ? new Float32Array(buffers[position], 0, chunkBytes / 4) : new Float32Array(chunkBytes / 4)).fill(
      position + salt / 1000,
    ),
  }));
}

/**
 * The host tier alone (`ssdPools` empty), or the SSD tier as a node runs it, behind a host pool:
 * chunks go to SSD from their host replicas and come back into host memory (a promotion) when
 * read. Bandwidths: `bandwidths` as the node's KV_BANDWIDTHS would give them (host first, then
 * each SSD pool); an entry left undefined is measured at open (O_DIRECT reads beside the pool),
 * which is what a node does when none is configured. Placement across several SSD pools is the
 * pool's own: kv-core's bandwidth-proportional placement (Unified KV pooling Eq. 1–2).
 *
 * @param {{ dir: string, model: string, geometry: { layers: number, rowElems: number }, chunks: number,
 *   ssdPools?: string[], bandwidths?: Array<number | undefined>, ssdQueueDepth?: number,
 *   writer?: import('../../apps/node-manager/dist/kv-store/tier.writer.js').TierWriterTuning, ioBackend?: 'auto' | 'pread' }} o
 */
export async function openTierStore(o) {
  const chunkBytes = o.geometry.layers * 2 * 256 * o.geometry.rowElems * 4;
  const bytes = o.chunks * chunkBytes;
  const room = 2 * bytes + 64 * MiB;
  const ssdPools = o.ssdPools ?? [];
  const tier = ssdPools.length > 0 ? 'ssd' : 'mem';
  mkdirSync(o.dir, { recursive: true });
  const { devices } = await openPoolDevices(
    {
      enabled: true,
      dataDir: o.dir,
      hostBytes: room,
      hostDevices: 1,
      // Each pool could take everything: a full device would skew the bandwidth-proportional split.
      ssdPools: ssdPools.map((path) => ({ path, bytes: room })),
      bandwidths: o.bandwidths ?? (tier === 'mem' ? [10] : [10, ...ssdPools.map(() => 2)]),
      ssdTtlMs: 3_600_000,
      ioBackend: o.ioBackend ?? 'auto',
      eventsMs: 50,
    },
    o.ssdQueueDepth ? { ssdQueueDepth: o.ssdQueueDepth } : {},
  );
  const tiers = new OffloadTiers(devices, 3_600_000, () => {});
  await tiers.addModel(o.model, o.geometry, join(o.dir, 'journal.mkvj'));
  const writer = new TierWriter(
    tiers,
    (e) => {
      throw e;
    },
    undefined,
    o.writer ?? {},
  );
  let stored = null;
  // The chunks a put exports, in 2 MiB-aligned host buffers reused across puts (a node's exports
  // go into its pooled buffers, not fresh arrays a collector later frees mid-put).
  const payloads = Array.from({ length: o.chunks }, () => allocHostBuffer(chunkBytes));
  /**
   * Until every segment is readable from the tier, and until the journal commit that makes it
   * survive a restart; `host`: until the write-through to host memory resolved. `chunks`: made
   * beforehand (a profile keeps filling them out of its window).
   */
  const put = async (salt, chunks = conversation(o, salt, payloads)) => {
    const m = tiers.model(o.model);
    const t0 = process.hrtime.bigint();
    await writer.write(o.model, chunks);
    const host = Number(process.hrtime.bigint() - t0) / 1e9;
    while (!chunks.every((c) => leadingLayers(m.table, c.key, tier) === o.geometry.layers)) await new Promise((r) => setImmediate(r));
    const readable = Number(process.hrtime.bigint() - t0) / 1e9;
    await writer.drain();
    const committed = Number(process.hrtime.bigint() - t0) / 1e9;
    const prefix = m.table.longestPrefix(chunks.map((c) => c.key));
    if (prefix.length !== o.chunks) throw new Error(`${tier}: ${prefix.length} of ${o.chunks} chunks stored`);
    // Keep only the newest conversation, so puts never meet a full tier (eviction is not timed).
    if (stored)
      tiers.applyRemovals(
        m,
        stored.flatMap((c) => m.table.removeChunk(c.key)),
      );
    stored = chunks;
    return { readable, committed, host };
  };
  /**
   * Seconds to restore every layer of the stored conversation; for SSD, after its host replicas
   * are evicted. `layerSeconds`, when given, receives how long each layer's load waited.
   */
  const get = async (options, layerSeconds) => {
    const m = tiers.model(o.model);
    if (tier === 'ssd') {
      tiers.evict(m, 'mem', 4 * bytes);
      if (stored.some((c) => m.table.holdsChunk(c.key, 'mem'))) throw new Error('host replicas survived eviction');
    }
    const prefix = m.table.longestPrefix(stored.map((c) => c.key));
    const reader = new RestoreReader(tiers, m, prefix, 0, o.chunks * 256, options);
    try {
      return await timed(async () => {
        for (let l = 0; l < o.geometry.layers; l++) {
          if (!layerSeconds) await reader.load(l);
          else layerSeconds.push(await timed(() => reader.load(l)));
        }
      });
    } finally {
      reader.release();
    }
  };
  const close = async () => {
    await writer.drain();
    await tiers.close();
    await closePoolDevices(devices);
    for (const b of payloads) freeHostBuffer(b);
  };
  return {
    put,
    get,
    close,
    backend: tier === 'ssd' ? devices.find((d) => d.type === 'ssd')?.device.backend : undefined,
    /** Why the SSD pool runs pread (not compiled in, refused, forced); null for io_uring. */
    backendReason: tier === 'ssd' ? devices.find((d) => d.type === 'ssd')?.device.backendReason : undefined,
    /** The SSD pool devices (their live counters: `stats()`). */
    ssdDevices: devices.filter((d) => d.type === 'ssd').map((d) => d.device),
    /** Each SSD device's bandwidth as placement saw it (bytes/s). */
    ssdBandwidths: devices.filter((d) => d.type === 'ssd').map((d) => d.bandwidth),
  };
}
