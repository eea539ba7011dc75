// Same-process A/Bs of the store's get path (RestoreReader) and nothing else: the tiers bench
// runs its A/Bs between puts, raw write probes and baselines, whose writes make SSD reads
// noisy; here every round only gets, each variant once, the order reversed every other round.
// 8 Llama-3-8B-shaped 32 MiB chunks, as in the tiers bench. SSD variants read from an SSD pool
// behind a host pool with the host copies evicted first (every byte comes off the SSD);
// `qd` opens that variant's pool with another queue depth (one pool per depth).
//   default variants: the SSD get as it is (ring, CRC32C on the copy) against the previous
//   design (windows, CRC32C on the I/O thread) and against the ring on a pool 16 deep instead of
//   SSD_QUEUE_DEPTH; host gets with and without buffer reuse.
// Writes bench/results/tiers-ab.json: per variant the median GB/s and every round's figure,
// per variant after the first of its tier the median over rounds of (first's speed / its speed)
// is in `first_over` (above 1: the first is faster).
// Run: npm run bench -- tiers-ab [--rounds N] [--variants JSON] [--dir DIR]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { chunkKeys } from '@mnemo/kv-core';
import { ioInfo } from '@mnemo/native-cuda';
import { OffloadTiers } from '../apps/node-manager/dist/kv-store/offload.tiers.js';
import { closePoolDevices, openPoolDevices, SSD_QUEUE_DEPTH } from '../apps/node-manager/dist/kv-store/pool.devices.js';
import { RestoreReader } from '../apps/node-manager/dist/kv-store/restore.reader.js';
import { TierWriter } from '../apps/node-manager/dist/kv-store/tier.writer.js';
import { arg, median, round } from '@mnemo/testkit';
import { root } from './lib/bench.args.mjs';

const ROUNDS = Number(arg('rounds', 11));
const VARIANTS = JSON.parse(
  arg(
    'variants',
    JSON.stringify({
      ssd: { tier: 'ssd' },
      ssd_windows: { tier: 'ssd', options: { ssdReads: 'windows', readAheadBytes: 32 * 2 ** 20 } },
      ssd_qd16: { tier: 'ssd', qd: 16 },
      host: { tier: 'mem' },
      host_fresh_buffers: { tier: 'mem', options: { reuseBuffers: false } },
    }),
  ),
);
const base = mkdtempSync(join(arg('dir', tmpdir()), 'mnemo-tiers-ab-'));
const MiB = 2 ** 20;
const G = { layers: 32, rowElems: 512 };
const CHUNK_BYTES = G.layers * 2 * 256 * G.rowElems * 4;
const CHUNKS = 8;
const BYTES = CHUNKS * CHUNK_BYTES;
const MODEL = 'llama-3-8b-shaped';

/** One tier of the real store holding one conversation; `get(options)` restores all of it. */
async function store(tier, qd) {
  const dir = join(base, `${tier}-${qd}`);
  mkdirSync(dir);
  const room = 2 * BYTES + 64 * MiB;
  const { devices } = await openPoolDevices(
    {
      enabled: true,
      dataDir: dir,
      hostBytes: room,
      hostDevices: 1,
      ssdPools: tier === 'ssd' ? [{ path: join(dir, 'ssd-0.pool'), bytes: room }] : [],
      bandwidths: tier === 'mem' ? [10] : [10, 2],
      ssdTtlMs: 3_600_000,
      ioBackend: 'auto',
      eventsMs: 50,
    },
    { ssdQueueDepth: qd },
  );
  const tiers = new OffloadTiers(devices, 3_600_000, () => {});
  await tiers.addModel(MODEL, G, join(dir, 'journal.mkvj'));
  const writer = new TierWriter(tiers, (e) => {
    throw e;
  });
  const keys = chunkKeys(
    MODEL,
    'ab',
    Array.from({ length: CHUNKS * 256 }, (_, i) => (i * 31) % 50_000),
  );
  await writer.write(
    MODEL,
    keys.map((key, position) => ({ key, position, payload: new Float32Array(CHUNK_BYTES / 4).fill(position) })),
  );
  await writer.drain();
  const m = tiers.model(MODEL);
  return {
    /** The SSD pool's I/O backend (io_uring, or the pread fallback); undefined for the host tier. */
    backend: tier === 'ssd' ? devices.find((d) => d.type === 'ssd')?.device.backend : undefined,
    get: async (options) => {
      if (tier === 'ssd') tiers.evict(m, 'mem', 4 * BYTES);
      const reader = new RestoreReader(tiers, m, m.table.longestPrefix(keys), 0, CHUNKS * 256, options);
      const t0 = process.hrtime.bigint();
      try {
        for (let l = 0; l < G.layers; l++) await reader.load(l);
        return Number(process.hrtime.bigint() - t0) / 1e9;
      } finally {
        reader.release();
        await reader.whenIdle();
      }
    },
    close: async () => {
      await tiers.close();
      await closePoolDevices(devices);
    },
  };
}

const loadAtStart = loadavg();
try {
  const stores = new Map();
  for (const v of Object.values(VARIANTS)) {
    const key = `${v.tier}:${v.qd ?? SSD_QUEUE_DEPTH}`;
    if (!stores.has(key)) stores.set(key, await store(v.tier, v.qd ?? SSD_QUEUE_DEPTH));
    v.store = stores.get(key);
  }
  const names = Object.keys(VARIANTS);
  const seconds = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r < ROUNDS; r++) {
    for (const n of r % 2 ? [...names].reverse() : names) seconds[n].push(await VARIANTS[n].store.get(VARIANTS[n].options));
    console.error(`[tiers-ab] round ${r + 1}/${ROUNDS} done`);
  }
  // Which backend the SSD variants ran: a pread fallback is never silent here either.
  const ssdBackend = [...stores.entries()].find(([k]) => k.startsWith('ssd:'))?.[1].backend ?? null;
  for (const s of stores.values()) await s.close();
  const gbs = (s) => round(BYTES / s / 1e9, 3);
  const firstOfTier = new Map();
  const variants = {};
  for (const n of names) {
    const v = VARIANTS[n];
    if (!firstOfTier.has(v.tier)) firstOfTier.set(v.tier, n);
    const first = firstOfTier.get(v.tier);
    variants[n] = {
      tier: v.tier,
      queue_depth: v.tier === 'ssd' ? (v.qd ?? SSD_QUEUE_DEPTH) : undefined,
      options: v.options ?? {},
      get_gbs: gbs(median(seconds[n])),
      rounds_gbs: seconds[n].map(gbs),
      first_over: first === n ? undefined : { [first]: round(median(seconds[n].map((s, i) => s / seconds[first][i])), 3) },
    };
  }
  const result = {
    what: "RestoreReader gets of 8 × 32 MiB chunks, every variant once per round, order reversed every other round; first_over: median over rounds of the first variant of the tier's speed over this one's",
    rounds: ROUNDS,
    io: { ...ioInfo(), ssdBackend },
    load_average: { start: loadAtStart.map((x) => Math.round(x * 100) / 100), end: loadavg().map((x) => Math.round(x * 100) / 100) },
    variants,
  };
  mkdirSync(join(root, 'bench/results'), { recursive: true });
  writeFileSync(join(root, 'bench/results/tiers-ab.json'), JSON.stringify(result, null, 2) + '\n');
  console.log(JSON.stringify(result, null, 2));
  if (ssdBackend && ssdBackend !== 'io_uring')
    console.error(
      `[tiers-ab] the SSD variants ran the ${ssdBackend} fallback, not io_uring (${ioInfo().uringReason ?? 'not compiled in'})`,
    );
} finally {
  rmSync(base, { recursive: true, force: true });
}
