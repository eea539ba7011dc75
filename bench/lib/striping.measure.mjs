// Bandwidth-proportional striping measured on two devices of different bandwidth: the SSD tier's
// get (RestoreReader, CRC-checked, host replicas evicted first) on the faster device alone, on
// the slower alone, and on both with the pool's own placement (kv-core placeSegments: Unified KV
// pooling Eq. 1–2), in interleaved rounds; plus each device's raw O_DIRECT read. The bandwidths
// placement uses are configured (as NODE_KV_BANDWIDTHS would) from a 128 MiB O_DIRECT read of
// each device taken first: the pool's own 16 MiB start-up probe finishes inside the throttle's
// first time slice, which lets a burst through, and reads a throttled device as far faster than
// its cap. The devices are loop devices read-capped through cgroup v1
// blkio (throttled.devices.mjs). Where that cannot be set up, the result says why and carries
// no figures.
import { join } from 'node:path';
import { probeDirectIo } from '@mnemo/native-cuda';
import { median, round } from '@mnemo/testkit';
import { openThrottledDevices, throttlingUnavailable } from './throttled.devices.mjs';
import { openTierStore } from './tier.store.mjs';

const MiB = 2 ** 20;

/**
 * @param {{ base: string, model: string, geometry: { layers: number, rowElems: number }, chunks: number,
 *   reps: number, bps: [number, number], log?: (line: string) => void }} o
 */
export async function measureStriping(o) {
  const log = o.log ?? (() => {});
  const why = throttlingUnavailable();
  if (why) return { skipped: `striping not measured: ${why}` };
  const chunkBytes = o.geometry.layers * 2 * 256 * o.geometry.rowElems * 4;
  const bytes = o.chunks * chunkBytes;
  const room = 2 * bytes + 64 * MiB;
  let devs;
  try {
    // Each device holds the pool of its single-device store and of the striped one, plus probes.
    devs = openThrottledDevices({ base: o.base, bytesEach: 2 * room + 256 * MiB, bps: o.bps });
  } catch (e) {
    return { skipped: `striping not measured: setting up throttled loop devices failed: ${e.message}` };
  }
  const [fast, slow] = devs.devices;
  const stores = {};
  try {
    const raw = async (dir) => {
      const path = join(dir, 'raw.bin');
      await probeDirectIo({ path, bytes: 128 * MiB, blockBytes: MiB, queueDepth: 32, mode: 'write' });
      return (await probeDirectIo({ path, bytes: 128 * MiB, blockBytes: MiB, queueDepth: 32, mode: 'read' })).bytesPerSecond;
    };
    const t = { fast: [], slow: [], striped: [], rawFast: [], rawSlow: [] };
    // The lower of two reads per device: the throttle lets a burst through when a read starts in a
    // fresh time slice, which only ever inflates a reading.
    for (let k = 0; k < 2; k++) {
      t.rawFast.push(await raw(fast.dir));
      t.rawSlow.push(await raw(slow.dir));
    }
    const configured = [Math.min(...t.rawFast), Math.min(...t.rawSlow)];
    const open = (name, dirs, bandwidths) =>
      openTierStore({
        dir: join(o.base, `stripe-${name}`),
        model: o.model,
        geometry: o.geometry,
        chunks: o.chunks,
        ssdPools: dirs.map((d) => join(d, `${name}.pool`)),
        bandwidths: [10, ...bandwidths],
      });
    stores.fast = await open('fast', [fast.dir], [configured[0]]);
    stores.slow = await open('slow', [slow.dir], [configured[1]]);
    stores.striped = await open('striped', [fast.dir, slow.dir], configured);
    let salt = 1000;
    for (let r = 0; r < o.reps; r++) {
      // Rotate the order so no store always follows another.
      const order = ['fast', 'slow', 'striped'];
      for (let k = 0; k < r % 3; k++) order.push(order.shift());
      for (const name of order) {
        await stores[name].put(++salt);
        t[name].push(bytes / (await stores[name].get()));
      }
      t.rawFast.push(await raw(fast.dir));
      t.rawSlow.push(await raw(slow.dir));
      log(`[tiers] striping round ${r + 1}/${o.reps} done`);
    }
    const gbs = (k) => round(median(t[k]) / 1e9, 3);
    const result = {
      devices: `two loop devices (ext4), reads capped by cgroup v1 blkio.throttle.read_bps_device at ${o.bps.map((b) => `${b / 1e6} MB/s`).join(' and ')}`,
      caps_gbs: o.bps.map((b) => b / 1e9),
      bandwidths_configured_gbs: stores.striped.ssdBandwidths.map((b) => round(b / 1e9, 3)),
      raw_read_gbs: { fast: gbs('rawFast'), slow: gbs('rawSlow') },
      get_gbs: { fast_alone: gbs('fast'), slow_alone: gbs('slow'), striped: gbs('striped') },
      rounds_gbs: Object.fromEntries(Object.entries(t).map(([k, v]) => [k, v.map((x) => round(x / 1e9, 3))])),
    };
    result.striped_frac_of_sum = round(result.get_gbs.striped / (result.get_gbs.fast_alone + result.get_gbs.slow_alone), 3);
    result.striped_over_fastest = round(result.get_gbs.striped / result.get_gbs.fast_alone, 3);
    result.striped_frac_of_raw_sum = round(result.get_gbs.striped / (result.raw_read_gbs.fast + result.raw_read_gbs.slow), 3);
    return result;
  } finally {
    for (const s of Object.values(stores)) await s.close().catch(() => {});
    devs.close();
  }
}
