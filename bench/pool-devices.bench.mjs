// Pool-device mechanism figures against the machine's physical limits, from one run:
//   host pool put/get (JS memory ↔ host pool, one range and a chunk gather) vs memcpy;
//   SSD pool write/read (host pool ↔ SSD pool) vs raw O_DIRECT through the same path;
//   SSD pool read vs a file-per-chunk store read cold (page cache dropped).
// Medians of interleaved repetitions (the machine is shared). Writes bench/results/pool-devices.json.
// Run: npm run bench -- pool-devices [--quick] [--dir DIR]   (DIR: where the SSD files go; default the OS temp dir)
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  allocHostBuffer,
  dropPageCache,
  ioInfo,
  kvChunkRanges,
  kvSegmentBytes,
  openHostPool,
  openSsdPool,
  packCrcRanges,
  packTransferRanges,
  probeDirectIo,
  probeMemcpy,
  transfer,
} from '@mnemo/native-cuda';
import { arg, median } from '@mnemo/testkit';
import { quick, root } from './lib/bench.args.mjs';

const base = mkdtempSync(join(arg('dir', tmpdir()), 'mnemo-pool-bench-'));
const REPS = quick ? 3 : 9;
const MiB = 2 ** 20;
const SSD_BYTES = (quick ? 64 : 256) * MiB;
const CHUNK = 2 * MiB; // one chunk of a small model: 256 tokens × 8 layers × K|V × 2 kv heads × 64 × fp32

const gbps = (bytes, seconds) => bytes / seconds / 1e9;
const one = (src, srcOffset, dst, dstOffset, length) => packTransferRanges([{ src, srcOffset, dst, dstOffset, length }]);

async function timed(fn) {
  const t0 = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

/** Median seconds of `n` back-to-back runs (warm caches, as a steady stream of puts sees). */
async function block(fn, n = 5) {
  const xs = [];
  for (let i = 0; i < n; i++) xs.push(await timed(fn));
  return median(xs);
}

/** Host pool put/get at `bytes` against memcpy of the same size; rounds interleave the series. */
async function hostFigures(pool, bytes) {
  const js = new Uint8Array(bytes).fill(7);
  const back = new Uint8Array(bytes);
  // Staging memory from allocHostBuffer (huge pages from 4 MiB on), as an engine could use.
  const staged = new Uint8Array(allocHostBuffer(bytes)).fill(7);
  const crc = (operand) => packCrcRanges([{ operand, offset: 0, length: bytes }]);
  const cases = {
    put: () => transfer([js, pool], one(0, 0, 1, 0, bytes)),
    putFromHostBuffer: () => transfer([staged, pool], one(0, 0, 1, 0, bytes)),
    putCrc: () => transfer([js, pool], one(0, 0, 1, 0, bytes), { crcs: crc(1) }),
    get: () => transfer([pool, back], one(0, 0, 1, 0, bytes)),
    getCrc: () => transfer([pool, back], one(0, 0, 1, 0, bytes), { crcs: crc(1) }),
  };
  const series = { memcpy: [] };
  for (const k of Object.keys(cases)) series[k] = [];
  for (let r = 0; r < REPS; r++) {
    // The limit: the faster of glibc memcpy and the transfers' kernel, on huge-page buffers.
    const m = await probeMemcpy(bytes, 5);
    series.memcpy.push(Math.min(median(m.memcpySeconds), median(m.kernelSeconds)));
    for (const [k, fn] of Object.entries(cases)) series[k].push(await block(fn));
  }
  const out = { bytes };
  for (const [k, v] of Object.entries(series)) out[`${k}GBps`] = gbps(bytes, median(v));
  for (const k of Object.keys(cases)) out[`${k}VsMemcpy`] = out[`${k}GBps`] / out.memcpyGBps;
  return out;
}

/** A whole chunk gathered from a block-major fp32 device cache (many 8 KiB ranges). */
async function gatherFigures(pool) {
  const geometry = { numLayers: 8, numKvHeads: 2, headDim: 64, blockSize: 16 };
  const blocks = Array.from({ length: 16 }, (_, i) => (i * 37) % 256);
  const cache = new Float32Array(256 * geometry.numLayers * 2 * 16 * 2 * 64).fill(1.5);
  const seg = kvSegmentBytes(geometry, 256);
  const segments = Array.from({ length: 8 }, (_, l) => ({ operand: 1, offset: l * seg }));
  const ranges = kvChunkRanges({ geometry, cache: { operand: 0 }, blocks, segments, direction: 'gather' });
  const crcs = packCrcRanges(segments.map((s) => ({ operand: 1, offset: s.offset, length: seg })));
  const bytes = seg * 8;
  const t = { memcpy: [], gather: [], gatherCrc: [] };
  for (let r = 0; r < REPS; r++) {
    const m = await probeMemcpy(bytes, 5);
    t.memcpy.push(Math.min(median(m.memcpySeconds), median(m.kernelSeconds)));
    t.gather.push(await block(() => transfer([cache, pool], ranges)));
    t.gatherCrc.push(await block(() => transfer([cache, pool], ranges, { crcs })));
  }
  const memcpyGBps = gbps(bytes, median(t.memcpy));
  return {
    bytes,
    ranges: ranges.length / 5,
    memcpyGBps,
    gatherGBps: gbps(bytes, median(t.gather)),
    gatherCrcGBps: gbps(bytes, median(t.gatherCrc)),
    gatherVsMemcpy: gbps(bytes, median(t.gather)) / memcpyGBps,
    gatherCrcVsMemcpy: gbps(bytes, median(t.gatherCrc)) / memcpyGBps,
  };
}

/** SSD pool write/read of SSD_BYTES as CHUNK segments vs raw O_DIRECT with the same request size. */
async function ssdFigures(pool, backend) {
  const path = join(base, `pool-${backend}.bin`);
  const probePath = join(base, `probe-${backend}.bin`);
  const ssd = await openSsdPool({ path, bytes: SSD_BYTES, backend, queueDepth: 32, maxRequestBytes: MiB });
  const n = SSD_BYTES / CHUNK;
  // Chunks land in a shuffled order on the device: the pool does not need them adjacent.
  const order = Array.from({ length: n }, (_, i) => (i * 7) % n);
  const write = packTransferRanges(
    order.map((slot, i) => ({ src: 0, srcOffset: i * CHUNK, dst: 1, dstOffset: slot * CHUNK, length: CHUNK })),
  );
  const read = packTransferRanges(
    order.map((slot, i) => ({ src: 1, srcOffset: slot * CHUNK, dst: 0, dstOffset: i * CHUNK, length: CHUNK })),
  );
  const crcs = packCrcRanges(order.map((_, i) => ({ operand: 0, offset: i * CHUNK, length: CHUNK })));
  const t = { rawWrite: [], rawRead: [], write: [], read: [], readCrc: [] };
  const probe = (mode) => probeDirectIo({ path: probePath, bytes: SSD_BYTES, blockBytes: MiB, queueDepth: 32, mode, backend });
  await probe('write');
  for (let r = 0; r < Math.max(3, REPS >> 1); r++) {
    t.rawWrite.push((await probe('write')).seconds);
    t.write.push(await timed(() => transfer([pool, ssd], write)));
    t.rawRead.push((await probe('read')).seconds);
    t.read.push(await timed(() => transfer([pool, ssd], read)));
    t.readCrc.push(await timed(() => transfer([pool, ssd], read, { crcs })));
  }
  const out = {
    backend: ssd.backend,
    backendReason: ssd.backendReason,
    bytes: SSD_BYTES,
    segment: CHUNK,
    queueDepth: ssd.queueDepth,
    requests: ssd.stats().requests,
  };
  for (const [k, v] of Object.entries(t)) out[`${k}GBps`] = gbps(SSD_BYTES, median(v));
  out.writeVsRaw = out.writeGBps / out.rawWriteGBps;
  out.readVsRaw = out.readGBps / out.rawReadGBps;
  out.readCrcVsRaw = out.readCrcGBps / out.rawReadGBps;
  await ssd.close();
  rmSync(probePath, { force: true });
  return out;
}

/** The baseline the SSD pool replaces: one file per chunk, read back cold. */
async function filePerChunkFigures(pool) {
  const dir = join(base, 'files');
  mkdirSync(dir);
  const n = SSD_BYTES / CHUNK;
  const data = new Uint8Array(CHUNK).fill(9);
  for (let i = 0; i < n; i++) await writeFile(join(dir, `${i}.kv`), data);
  const ssd = await openSsdPool({ path: join(base, 'cold.bin'), bytes: SSD_BYTES, queueDepth: 32 });
  await transfer(
    [pool, ssd],
    packTransferRanges(
      Array.from({ length: n }, (_, i) => ({ src: 0, srcOffset: i * CHUNK, dst: 1, dstOffset: i * CHUNK, length: CHUNK })),
    ),
  );
  const read = packTransferRanges(
    Array.from({ length: n }, (_, i) => ({ src: 1, srcOffset: i * CHUNK, dst: 0, dstOffset: i * CHUNK, length: CHUNK })),
  );
  const t = { files: [], pool: [] };
  for (let r = 0; r < Math.max(3, REPS >> 1); r++) {
    for (let i = 0; i < n; i++) await dropPageCache(join(dir, `${i}.kv`));
    // Same concurrency as the pool's queue: 32 chunks in flight.
    t.files.push(
      await timed(async () => {
        for (let i = 0; i < n; i += 32)
          await Promise.all(Array.from({ length: Math.min(32, n - i) }, (_, k) => readFile(join(dir, `${i + k}.kv`))));
      }),
    );
    t.pool.push(await timed(() => transfer([pool, ssd], read)));
  }
  await ssd.close();
  return {
    bytes: SSD_BYTES,
    chunk: CHUNK,
    filesGBps: gbps(SSD_BYTES, median(t.files)),
    poolGBps: gbps(SSD_BYTES, median(t.pool)),
    poolVsFiles: median(t.files) / median(t.pool),
  };
}

try {
  const pool = await openHostPool({ bytes: SSD_BYTES });
  const result = {
    io: ioInfo(),
    reps: REPS,
    host: [await hostFigures(pool, MiB), await hostFigures(pool, 32 * MiB)],
    gather: await gatherFigures(pool),
    ssd: [await ssdFigures(pool, 'auto'), await ssdFigures(pool, 'pread')],
    coldRead: await filePerChunkFigures(pool),
  };
  await pool.close();
  mkdirSync(join(root, 'bench/results'), { recursive: true });
  writeFileSync(join(root, 'bench/results/pool-devices.json'), JSON.stringify(result, null, 2) + '\n');
  console.log(JSON.stringify(result, null, 2));
} finally {
  rmSync(base, { recursive: true, force: true });
}
