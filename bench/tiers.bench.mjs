// The KV store's tiers at realistic sizes, beside their physical limits and two baselines, in
// one run. A Llama-3-8B-shaped chunk (32 layers × K|V × 256 tokens × 8 kv heads × 128 dims ×
// 2 bytes) is 32 MiB and one layer of it 1 MiB; the store keeps fp32 rows, so the bench uses
// 512 fp32 per row to move exactly those bytes.
//   put: TierWriter.write + drain (host write-through, or SSD write-behind) with CRC32C;
//   get: RestoreReader loading every layer of the chunks in the layout the engine takes, CRC
//        checked — the store's real code path, not the device underneath;
//   limits (lib/tier.limits.mjs), each measured like the thing it bounds and back to back with it
//        in every round (the order alternating): memcpy of the same bytes on the copy threads in
//        the same pieces (a get: one 8 MiB transfer per layer into a ring of three payloads; a
//        put: one copy of everything), and raw O_DIRECT reads and writes of a file beside the
//        pool through the same backend at the pool's request size (one 1 MiB segment) and queue
//        depth (SSD_QUEUE_DEPTH). Each fraction is the median of the per-round ratios, every
//        round's kept in `fraction_rounds`; a fraction above 1.05 is a measurement error and
//        fails the run (the results file is still written, with `measurement_errors`);
//   baselines: one file per chunk through the filesystem (LMCache's local-disk backend) read
//        cold (each file's page cache dropped with posix_fadvise(DONTNEED) after fsync) and
//        warm (page cache hot); Redis as a remote store (LMCache's Redis backend: one value per
//        chunk) through the official client at its best (lib/redis.baseline.mjs), REDIS_URL or a
//        private redis-server;
//   striping: the SSD tier's get on two devices of different bandwidth (loop devices read-capped
//        by cgroup v1 blkio, root only), each alone and striped by the pool's bandwidth-
//        proportional placement (lib/striping.measure.mjs): striped_frac_of_sum, against the
//        sum of the two alone (target ≥ 0.8), and striped_over_fastest. Where the devices cannot
//        be set up, the JSON's `striping.skipped` and the output say why.
//   A/B: the gets run once more per hardware CRC32C implementation (selectCrc32c, process-wide),
//        interleaved in the same rounds (the headline is the paired get, default CRC32C);
//        and once more with RestoreReader's copy-ahead off, with host gets taking fresh buffers
//        (no reuse across restores), and with SSD gets reading windows (the previous design).
//        SSD puts also run on a second pool with the write-behind as it was (ab_ssd_put).
//        `npm run bench -- tiers-ab` runs such A/Bs without the puts and probes in between.
//   backend: `io.ssdBackend` says which I/O backend the SSD pool ran. A pread/pwrite fallback run
//        keeps its SSD fractions out of the headline (under `pread_fallback`) and says how to get
//        io_uring.
// Interleaved repetitions after unrecorded warm-up rounds (the baselines in rounds of their own after the tiers'), medians. Writes bench/results/tiers.json (figure: bench/figures/tiers.figure.mjs).
// Run: npm run bench -- tiers [--quick] [--dir DIR] [--stripe-mbps 400,200] [--io pread]   (DIR: where the SSD pool and files go)
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32cImplementations, dropPageCache, ioInfo, selectCrc32c } from '@mnemo/native-cuda';
import { SSD_QUEUE_DEPTH } from '../apps/node-manager/dist/kv-store/pool.devices.js';
import { arg, median, round } from '@mnemo/testkit';
import { openRedisBaseline } from './lib/redis.baseline.mjs';
import { measureStriping } from './lib/striping.measure.mjs';
import { openTierStore, timed } from './lib/tier.store.mjs';
import { pairedFractions, paired, tierLimits } from './lib/tier.limits.mjs';
import { quick, root } from './lib/bench.args.mjs';

const base = mkdtempSync(join(arg('dir', tmpdir()), 'mnemo-tiers-bench-'));
/** Read caps of the two throttled devices striping is measured on (MB/s, faster first). */
const STRIPE_BPS = arg('stripe-mbps', '400,200')
  .split(',')
  .map((x) => Number(x) * 1e6);
if (STRIPE_BPS.length !== 2 || !STRIPE_BPS.every((b) => b > 0))
  throw new RangeError('--stripe-mbps takes two positive figures, e.g. 400,200');
/** SSD I/O backend of the pools and the raw probes: 'auto' (io_uring where it works), or 'pread' to see a fallback run. */
const IO = arg('io', 'auto');
if (IO !== 'auto' && IO !== 'pread') throw new RangeError("--io takes 'auto' or 'pread'");
const MiB = 2 ** 20;
const G = { layers: 32, rowElems: 512 };
const CHUNK_BYTES = G.layers * 2 * 256 * G.rowElems * 4; // 32 MiB
const CHUNKS = quick ? 4 : 8;
const BYTES = CHUNKS * CHUNK_BYTES;
const REPS = quick ? 3 : 9;
/**
 * Unrecorded rounds first, as the limit probes take their own warm-up pass: the first rounds of a
 * fresh process ran every tier operation slower (code not yet optimised, pool memory first touched).
 */
const WARMUP = quick ? 1 : 2;
const MODEL = 'llama-3-8b-shaped';
const STORE = { model: MODEL, geometry: G, chunks: CHUNKS, ioBackend: IO };

const gbps = (seconds) => BYTES / seconds / 1e9;
/** LMCache's local-disk layout: one file per chunk, written whole (no fsync, as that backend does), read whole. */
async function filePerChunk() {
  const dir = join(base, 'files');
  mkdirSync(dir);
  const files = Array.from({ length: CHUNKS }, (_, i) => join(dir, `${i}.kv`));
  const payload = new Uint8Array(CHUNK_BYTES).fill(3);
  const put = () =>
    timed(() =>
      Promise.all(
        files.map(async (f) => {
          const h = await open(f, 'w');
          try {
            await h.writeFile(payload);
          } finally {
            await h.close();
          }
        }),
      ),
    );
  const read = () => timed(() => Promise.all(files.map((f) => readFile(f))));
  return {
    put,
    getCold: async () => {
      for (const f of files) await dropPageCache(f);
      return read();
    },
    getWarm: async () => {
      await read();
      return read();
    },
  };
}

// The machine is shared: the load average says how far to trust a run.
const loadAtStart = loadavg();
try {
  const host = await openTierStore({ ...STORE, dir: join(base, 'store-mem') });
  const ssd = await openTierStore({ ...STORE, dir: join(base, 'store-ssd'), ssdPools: [join(base, 'store-ssd', 'ssd-0.pool')] });
  // The SSD put as it was (one write-through, then one batch at a time, host replicas checksummed again, a sync whenever the queue ran dry): an A/B of the put.
  const ssdPrevious = await openTierStore({
    ...STORE,
    dir: join(base, 'store-ssd-previous'),
    ssdPools: [join(base, 'store-ssd-previous', 'ssd-0.pool')],
    writer: { ssdBatchesInFlight: 1, recomputeSsdCrc: true, hostPartSegments: 0, hostFirstPartSegments: 0, commitBetweenParts: true },
  });
  const files = await filePerChunk();
  const limits = await tierLimits({
    bytes: BYTES,
    layerBytes: BYTES / G.layers,
    segmentBytes: CHUNK_BYTES / G.layers,
    queueDepth: SSD_QUEUE_DEPTH,
    rawPath: join(base, 'raw.bin'),
    backend: IO,
  });
  let redis = null;
  let redisSkipped = null;
  try {
    redis = await openRedisBaseline({ dir: base, chunkBytes: CHUNK_BYTES, chunks: CHUNKS });
  } catch (e) {
    redisSkipped = `no Redis: ${e.message}`;
    console.error(`[tiers] ${redisSkipped}`);
  }
  const t = {
    memcpyGet: [],
    memcpyPut: [],
    crcCopy: [],
    crcStreamsCopy: [],
    hostPut: [],
    hostGet: [],
    ssdPut: [],
    ssdPutCommitted: [],
    ssdPutPrevious: [],
    ssdGet: [],
    rawWrite: [],
    rawRead: [],
    filePut: [],
    fileCold: [],
    fileWarm: [],
    redisPut: [],
    redisGet: [],
    redisGetAuto: [],
    redisGetPipeline: [],
  };
  // The default first; the table-driven one is far too slow to be an alternative anyone would pick.
  const crcs = crc32cImplementations().filter((name) => name !== 'software');
  for (const name of crcs) Object.assign(t, { [`hostGet:${name}`]: [], [`ssdGet:${name}`]: [] });
  Object.assign(t, { hostGetNoAhead: [], ssdGetNoAhead: [], hostGetFreshBuffers: [], ssdGetWindows: [] });
  /** One get per CRC32C implementation (an A/B beside the paired get), the default last (it leaves the process as it found it). */
  const getsByCrc = async (get, key) => {
    for (const name of [...crcs.slice(1), crcs[0]]) {
      selectCrc32c(name);
      t[`${key}:${name}`].push(await get());
    }
  };
  let salt = 0;
  for (let r = 0; r < WARMUP + REPS; r++) {
    // Each tier back to back with its limit, the order alternating between rounds.
    const hp = await paired(r, limits.memcpyPut, () => host.put(++salt));
    t.memcpyPut.push(hp.limit);
    t.hostPut.push(hp.tier.readable);
    const hg = await paired(r, limits.memcpyGet, () => host.get());
    t.memcpyGet.push(hg.limit.seconds);
    t.crcCopy.push(hg.limit.crcCopy);
    t.crcStreamsCopy.push(hg.limit.crcStreamsCopy);
    t.hostGet.push(hg.tier);
    // Odd rounds run the A/B variants first, so neither side always follows the other.
    const hostAbs = async () => {
      t.hostGetNoAhead.push(await host.get({ copyAhead: false }));
      t.hostGetFreshBuffers.push(await host.get({ reuseBuffers: false }));
    };
    if (r % 2) await hostAbs();
    await getsByCrc(host.get, 'hostGet');
    if (r % 2 === 0) await hostAbs();
    const previousPut = async () => t.ssdPutPrevious.push((await ssdPrevious.put(++salt)).readable);
    if (r % 2) await previousPut();
    const sp = await paired(r, limits.rawWrite, () => ssd.put(++salt));
    if (r % 2 === 0) await previousPut();
    t.rawWrite.push(sp.limit);
    t.ssdPut.push(sp.tier.readable);
    t.ssdPutCommitted.push(sp.tier.committed);
    const sg = await paired(r, limits.rawRead, () => ssd.get());
    t.rawRead.push(sg.limit);
    t.ssdGet.push(sg.tier);
    const ssdAbs = async () => {
      t.ssdGetNoAhead.push(await ssd.get({ copyAhead: false }));
      t.ssdGetWindows.push(await ssd.get({ ssdReads: 'windows', readAheadBytes: 32 * MiB }));
    };
    if (r % 2) await ssdAbs();
    await getsByCrc(ssd.get, 'ssdGet');
    if (r % 2 === 0) await ssdAbs();
    console.error(r < WARMUP ? `[tiers] warm-up round ${r + 1}/${WARMUP} done` : `[tiers] round ${r + 1 - WARMUP}/${REPS} done`);
  }
  for (const k of Object.keys(t)) t[k] = t[k].slice(WARMUP);
  // The baselines in rounds of their own, after the tiers': a round of them reads about 1 GiB
  // into fresh Buffers (readFile, Redis replies) that the collector frees later, inside whatever
  // runs next; interleaved, that was the next round's host put and get.
  for (let r = 0; r < REPS; r++) {
    t.filePut.push(await files.put());
    t.fileCold.push(await files.getCold());
    t.fileWarm.push(await files.getWarm());
    if (redis) {
      try {
        t.redisPut.push(await redis.put());
        const got = await redis.get();
        t.redisGetAuto.push(got.auto);
        t.redisGetPipeline.push(got.pipeline);
      } catch (e) {
        redisSkipped = `Redis failed in round ${r + 1}: ${e.message || e.name}`;
        console.error(`[tiers] ${redisSkipped}`);
        await redis.close().catch(() => {});
        redis = null;
        for (const k of ['redisPut', 'redisGetAuto', 'redisGetPipeline']) t[k] = [];
      }
    }
    console.error(`[tiers] baseline round ${r + 1}/${REPS} done`);
  }
  await host.close();
  await ssd.close();
  await ssdPrevious.close();
  await redis?.close();
  // The baseline at its best: the faster way of pipelining, by median.
  if (redis) t.redisGet = median(t.redisGetAuto) <= median(t.redisGetPipeline) ? t.redisGetAuto : t.redisGetPipeline;
  let striping;
  try {
    striping = await measureStriping({ base, ...STORE, reps: quick ? 3 : 5, bps: STRIPE_BPS, log: (l) => console.error(l) });
  } catch (e) {
    striping = { failed: `striping measurement failed: ${e.message}` };
  }
  if (striping.skipped || striping.failed) console.error(`[tiers] ${striping.skipped ?? striping.failed}`);
  else
    console.error(
      `[tiers] striping: ${striping.get_gbs.striped} GB/s striped, ${striping.get_gbs.fast_alone} + ${striping.get_gbs.slow_alone} alone: ${striping.striped_frac_of_sum} of the sum, ×${striping.striped_over_fastest} the faster`,
    );
  const g = (k) => (t[k].length ? gbps(median(t[k])) : null);
  const result = {
    quick,
    chunk_bytes: CHUNK_BYTES,
    segment_bytes: CHUNK_BYTES / G.layers,
    chunks: CHUNKS,
    reps: REPS,
    warmup_rounds: WARMUP,
    io: { ...ioInfo(), ssdBackend: ssd.backend },
    load_average: {
      start: loadAtStart.map((x) => Math.round(x * 100) / 100),
      end: loadavg().map((x) => Math.round(x * 100) / 100),
      what: '1, 5 and 15 minute load averages (os.loadavg)',
    },
    limits: {
      memcpy_get_gbs: g('memcpyGet'),
      memcpy_put_gbs: g('memcpyPut'),
      memcpy: `fastest of glibc memcpy, the AVX2 copy kernel and the folded CRC32C copy of ${BYTES / MiB} MiB on the copy threads; get: in ${G.layers} pieces of ${BYTES / G.layers / MiB} MiB (one per layer) into a ring of three, as a restore copies; put: one copy into distinct memory, as the write-through`,
      raw_read_gbs: g('rawRead'),
      raw_write_gbs: g('rawWrite'),
      raw: `O_DIRECT on a file beside the pool, ${CHUNK_BYTES / G.layers / MiB} MiB requests, ${SSD_QUEUE_DEPTH} in flight (the pool's), the pool's backend`,
      pairing: 'each tier and its limit back to back in every round, the order alternating; fractions are medians of per-round ratios',
    },
    host: { put_gbs: g('hostPut'), get_gbs: g('hostGet') },
    ssd: {
      put_gbs: g('ssdPut'),
      put_committed_gbs: g('ssdPutCommitted'),
      get_gbs: g('ssdGet'),
      put: 'host write-through + SSD write-behind until readable from SSD; committed: until the journal and pool sync',
    },
    file_per_chunk: {
      put_gbs: g('filePut'),
      get_cold_gbs: g('fileCold'),
      get_warm_gbs: g('fileWarm'),
      cold: 'fdatasync + posix_fadvise(DONTNEED) on each file before the read',
      put: 'into the page cache, no fsync',
    },
    redis: redis
      ? {
          source: redis.source,
          settings: redis.settings,
          put_gbs: g('redisPut'),
          get_gbs: g('redisGet'),
          get_gbs_auto_pipelining: g('redisGetAuto'),
          get_gbs_explicit_pipeline: g('redisGetPipeline'),
        }
      : null,
    redis_skipped: redisSkipped,
    ab_crc32c: {
      what: 'the same gets in the same rounds with each CRC32C implementation (default first); checksumming copies split over the copy threads as the memcpy limit is',
      implementations: crcs,
      host_get_gbs: Object.fromEntries(crcs.map((n) => [n, g(`hostGet:${n}`)])),
      ssd_get_gbs: Object.fromEntries(crcs.map((n) => [n, g(`ssdGet:${n}`)])),
      crc_copy_gbs: { selected: g('crcCopy'), crc32_streams: g('crcStreamsCopy') },
    },
    ab_copy_ahead: {
      what: 'the same gets (default CRC32C) in the same rounds with RestoreReader copyAhead off: each layer copied only when loaded',
      host_get_gbs: { on: g('hostGet'), off: g('hostGetNoAhead') },
      ssd_get_gbs: { on: g('ssdGet'), off: g('ssdGetNoAhead') },
    },
    ab_buffer_reuse: {
      what: "host gets in the same rounds with each restore allocating (and zeroing) its own layer payloads instead of taking them from the tiers' buffer pool",
      host_get_gbs: { reused: g('hostGet'), fresh: g('hostGetFreshBuffers') },
      reused_over_fresh: round(median(t.hostGetFreshBuffers.map((x, i) => x / t.hostGet[i])), 3),
    },
    ab_ssd_put: {
      what: 'SSD puts in the same rounds (order alternating): now (write-through in parts whose SSD writes start as each lands, two write-behind batches in flight, SSD copies of host replicas under their recorded CRC32C, no commit between the parts of one write-through) vs previous (one write-through, then one batch at a time, each host replica checksummed again on the SSD worker, a commit whenever the queue ran dry)',
      put_gbs: { now: g('ssdPut'), previous: g('ssdPutPrevious') },
      now_over_previous: round(median(t.ssdPutPrevious.map((x, i) => x / t.ssdPut[i])), 3),
      ratios: 'median over rounds of the per-round speed ratio',
    },
    ab_ssd_reads: {
      what: 'SSD gets in the same rounds, same pool: ring (one transfer per layer, read-ahead budget of layers in flight, CRC32C checked on the copy into the payload, copy-ahead) vs windows (the previous design: two 16 MiB windows (a 32 MiB read-ahead), CRC32C on the I/O thread, no copy-ahead of SSD layers)',
      ssd_get_gbs: { ring: g('ssdGet'), windows: g('ssdGetWindows') },
      ring_over_windows: round(median(t.ssdGetWindows.map((x, i) => x / t.ssdGet[i])), 3),
      ratios: 'median over rounds of the per-round speed ratio',
    },
  };
  const fr = pairedFractions({
    host_get_frac_of_memcpy: [t.memcpyGet, t.hostGet],
    host_put_frac_of_memcpy: [t.memcpyPut, t.hostPut],
    ssd_get_frac_of_raw: [t.rawRead, t.ssdGet],
    ssd_put_frac_of_raw: [t.rawWrite, t.ssdPut],
  });
  const { ssd_get_frac_of_raw, ssd_put_frac_of_raw, ...hostFractions } = fr.fractions;
  const uring = ssd.backend === 'io_uring';
  Object.assign(result, hostFractions);
  if (uring) Object.assign(result, { ssd_get_frac_of_raw, ssd_put_frac_of_raw });
  else
    result.pread_fallback = {
      what: `the SSD pool ran the pread/pwrite fallback (${ssd.backendReason ?? ioInfo().uringReason ?? 'io_uring not compiled in'}), not io_uring: its figures are kept out of the headline`,
      how_to_get_io_uring:
        'run without --io pread, on an addon built with liburing (apt-get install -y liburing-dev, then node scripts/build-native.mjs) where seccomp and sysctl allow io_uring',
      ssd_get_frac_of_raw,
      ssd_put_frac_of_raw,
    };
  Object.assign(result, {
    fraction_rounds: fr.perRound,
    measurement_errors: fr.errors,
  });
  Object.assign(result, {
    ssd_get_vs_file_cold: round(result.ssd.get_gbs / result.file_per_chunk.get_cold_gbs, 3),
    ssd_get_vs_file_warm: round(result.ssd.get_gbs / result.file_per_chunk.get_warm_gbs, 3),
    ssd_put_vs_file: round(result.ssd.put_gbs / result.file_per_chunk.put_gbs, 3),
    vs_redis_get: redis ? round(result.host.get_gbs / result.redis.get_gbs, 3) : null,
    ssd_vs_redis_get: redis ? round(result.ssd.get_gbs / result.redis.get_gbs, 3) : null,
    striping,
    striped_frac_of_sum: striping.striped_frac_of_sum ?? null,
    striped_over_fastest: striping.striped_over_fastest ?? null,
    // Every round's GB/s, in round order: on a shared machine the spread says as much as the median.
    rounds_gbs: Object.fromEntries(
      Object.entries(t)
        .filter(([, v]) => v.length)
        .map(([k, v]) => [k, v.map((x) => round(gbps(x), 3))]),
    ),
  });
  mkdirSync(join(root, 'bench/results'), { recursive: true });
  writeFileSync(join(root, 'bench/results/tiers.json'), JSON.stringify(result, null, 2) + '\n');
  console.log(JSON.stringify(result, null, 2));
  if (!uring)
    console.error(
      `[tiers] SSD figures from the pread/pwrite fallback, kept out of the headline: ${result.pread_fallback.how_to_get_io_uring}`,
    );
  if (fr.errors.length > 0) {
    for (const e of fr.errors) console.error(`[tiers] measurement error: ${e}`);
    process.exitCode = 1;
  }
} finally {
  rmSync(base, { recursive: true, force: true });
}
