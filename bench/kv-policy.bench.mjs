// Offload-pool policy on the request path (libs/kv-core src/pool): lookup, touch, eviction,
// placement, allocation, journal and CRC32C costs at realistic table sizes, plus the modeled
// layer-wise read time of interleaved placement against Algorithm 1's fill-first order.
// Writes bench/results/kv-policy.json.
// Run: npm run bench -- kv-policy   (or `npx tsc -b libs/kv-core && node --expose-gc bench/kv-policy.bench.mjs [--quick]`)
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import {
  compactJournal,
  crc32c,
  decodeJournal,
  ExtentAllocator,
  interleave,
  LookupTable,
  placeSegments,
  planOffload,
  segmentBytes,
  targetCounts,
} from '@mnemo/kv-core';
import { quick, root } from './lib/bench.args.mjs';

const LAYERS = 32; // Llama-3.1-8B: 32 layers, 8 KV heads × 128, fp16 → 1 MiB segments
const SEG = segmentBytes({ layers: LAYERS, kvHeads: 8, headDim: 128, bytesPerElement: 2 });
const CHUNKS = quick ? 4_000 : 32_768; // 32 768 chunks × 32 layers = 1 M SSD segments (1 TiB)
const PREFIX = 128; // a 32 K-token conversation
const key = (i) => i.toString(16).padStart(32, '0');

/** Best of `reps` runs of fn, in ms. */
function best(reps, fn) {
  let t = Infinity;
  for (let r = 0; r < reps; r++) {
    const t0 = performance.now();
    fn(r);
    t = Math.min(t, performance.now() - t0);
  }
  return t;
}

function heapMiB() {
  globalThis.gc?.();
  return process.memoryUsage().heapUsed / 2 ** 20;
}

// Load average at the start: on a shared machine the timings scale with it.
const results = {
  machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version, loadavg1m: +loadavg()[0].toFixed(2) },
  quick,
  segmentBytes: SEG,
  layers: LAYERS,
};

// --- CRC32C (pure TS; the native one is for payloads) ---
{
  const buf = new Uint8Array(1 << 20).map((_, i) => (i * 131) & 0xff);
  const ms = best(5, () => crc32c(buf));
  results.crc32c = { bytes: buf.length, ms, mbPerS: Math.round(buf.length / 2 ** 20 / (ms / 1000)) };
}

// --- Lookup table at 1 M SSD segments ---
const heap0 = heapMiB();
const table = new LookupTable({ numLayers: LAYERS, ttlMs: 3_600_000 });
const t0 = performance.now();
for (let c = 0; c < CHUNKS; c++) {
  for (let l = 0; l < LAYERS; l++) {
    table.put(
      { chunkKey: key(c), position: c % PREFIX, layer: l },
      { deviceIndex: c & 1, type: 'ssd', offset: (c * LAYERS + l) * SEG, length: SEG, crc32c: 0 },
      c,
    );
  }
}
const putMs = performance.now() - t0;
const segments = CHUNKS * LAYERS;
results.table = {
  segments,
  putNsPerSegment: Math.round((putMs * 1e6) / segments),
  heapBytesPerSegment: Math.round(((heapMiB() - heap0) * 2 ** 20) / segments),
};

// A request: longest prefix over its 128 chunks, touch them, pin every segment it loads, unpin.
{
  const chain = Array.from({ length: PREFIX }, (_, i) => key(CHUNKS - PREFIX + i));
  let now = CHUNKS;
  const prefixMs = best(20, () => table.longestPrefix(chain));
  const touchMs = best(20, () => table.touch(chain, ++now));
  const pinMs = best(5, () => {
    const pins = [];
    for (const k of chain) for (let l = 0; l < LAYERS; l++) pins.push(table.pin(k, l, 'ssd'));
    for (const p of pins) table.unpin(p);
  });
  results.request = {
    chunks: PREFIX,
    longestPrefixUsPerChunk: +((prefixMs * 1000) / PREFIX).toFixed(2),
    touchUsPerChunk: +((touchMs * 1000) / PREFIX).toFixed(3),
    pinUnpinUsPerSegment: +((pinMs * 1000) / (PREFIX * LAYERS)).toFixed(3),
  };
}

// Eviction: touch a random half of the chunks (lazy), then evict 4096 segments (4 GiB).
{
  let now = 10 * CHUNKS;
  let s = 1;
  for (let i = 0; i < CHUNKS / 2; i++) {
    s = (s * 48271) % 2147483647;
    table.touch([key(s % CHUNKS)], ++now);
  }
  const victims = 4096;
  const t = performance.now();
  const removed = table.evict('ssd', victims * SEG, { lastTier: false });
  const ms = performance.now() - t;
  results.eviction = { victims: removed.length, usPerVictim: +((ms * 1000) / removed.length).toFixed(2), includesLazyRefiles: true };
  const t2 = performance.now();
  const expired = table.expire(now + 3_600_000 - CHUNKS / 2);
  results.expiry = {
    segments: expired.length,
    usPerSegment: +(((performance.now() - t2) * 1000) / Math.max(1, expired.length)).toFixed(2),
  };
}

// Journal: compaction of the whole SSD table, then decode it back.
{
  const t = performance.now();
  const bytes = compactJournal(table, Date.now());
  const compactMs = performance.now() - t;
  const t2 = performance.now();
  const decoded = decodeJournal(bytes);
  const decodeMs = performance.now() - t2;
  results.journal = {
    records: decoded.records.length,
    bytes: bytes.length,
    compactNsPerRecord: Math.round((compactMs * 1e6) / decoded.records.length),
    decodeNsPerRecord: Math.round((decodeMs * 1e6) / decoded.records.length),
  };
}

// --- Placement and allocation of one offload batch: 128 chunks × 32 layers, 3:1 devices ---
{
  const segs = [];
  for (let l = 0; l < LAYERS; l++) for (let c = 0; c < PREFIX; c++) segs.push({ position: c, layer: l });
  const devices = [{ bandwidth: 3 }, { bandwidth: 1 }];
  const placeMs = best(20, () => placeSegments(segs, devices));
  const planMs = best(5, () => {
    const pool = [0, 1].map((d) => ({
      deviceIndex: d,
      type: 'ssd',
      bandwidth: d === 0 ? 3 : 1,
      allocator: new ExtentAllocator(2 ** 40, 4096),
    }));
    planOffload(segs, pool, SEG);
  });
  results.placement = { segments: segs.length, placeSegmentsMs: +placeMs.toFixed(3), planOffloadMs: +planMs.toFixed(3) };
}

// --- Allocator under fragmentation: 20 000 live 1-segment extents, random free + allocate ---
{
  const a = new ExtentAllocator(40_000 * SEG, 4096);
  const held = [];
  for (let i = 0; i < 40_000; i++) held.push(a.allocate(SEG));
  let s = 7;
  const rand = (n) => ((s = (s * 48271) % 2147483647), s % n);
  for (let i = 0; i < 20_000; i++) a.free(held.splice(rand(held.length), 1)[0], SEG);
  const ops = 100_000;
  const t = performance.now();
  for (let i = 0; i < ops; i++) {
    const at = rand(held.length);
    a.free(held[at], SEG);
    held[at] = a.allocate(SEG);
  }
  const ms = performance.now() - t;
  results.allocator = {
    freeExtents: a.stats().freeExtents,
    nsPerFreeAndAllocate: Math.round((ms * 1e6) / ops),
    fragmentation: +a.stats().fragmentation.toFixed(3),
  };
}

// --- Modeled layer-wise load: why placement interleaves (bandwidth model, not a measurement) ---
// Two devices 3:1, one request of 128 chunks written in one batch; each layer's read time is
// the slowest device's share of that layer; the request's read time sums over layers.
{
  const bw = [3, 1];
  const n = PREFIX * LAYERS;
  const counts = targetCounts(bw, n);
  const fillFirst = Int32Array.from(counts.flatMap((c, d) => Array(c).fill(d)));
  const swrr = interleave(counts, 0);
  const layerTime = (order) => {
    let total = 0;
    for (let l = 0; l < LAYERS; l++) {
      const per = [0, 0];
      for (let c = 0; c < PREFIX; c++) per[order[l * PREFIX + c]]++;
      total += Math.max(per[0] / bw[0], per[1] / bw[1]);
    }
    return total;
  };
  const a = layerTime(fillFirst);
  const b = layerTime(swrr);
  results.modeledLayerwiseRead = {
    bandwidthRatio: '3:1',
    fillFirst: a,
    interleaved: b,
    speedup: +(a / b).toFixed(2),
    note: 'segment-units / bandwidth-units; ideal = n / Σb',
  };
}

mkdirSync(join(root, 'bench/results'), { recursive: true });
writeFileSync(join(root, 'bench/results/kv-policy.json'), JSON.stringify(results, null, 2) + '\n');
console.log(JSON.stringify(results, null, 2));
