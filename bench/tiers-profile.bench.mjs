// Where a tier get and put spend their time: the same store paths the tiers bench times
// (RestoreReader, TierWriter; 8 Llama-3-8B-shaped 32 MiB chunks), each run several times under
// `perf record` (CPU samples of every thread of this process, kernel included), the samples
// sorted into the data path's parts by symbol — the copy, CRC32C, I/O submission and the block
// layer, the journal's syncs, page faults and allocation, thread hand-offs, the N-API boundary,
// JavaScript — beside wall time, CPU time (all threads) and what the SSD device reports (requests,
// the most in flight). A get also records how long each layer's load waited, a put how long the
// host write-through took before the SSD write-behind. Without perf the result says so and keeps
// the timings and counters.
// Writes bench/results/tiers-profile.json.
// Run: npm run bench -- tiers-profile [--reps N] [--dir DIR]
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { chunkKeys } from '@mnemo/kv-core';
import { ioInfo } from '@mnemo/native-cuda';
import { arg, median, round } from '@mnemo/testkit';
import { conversation, openTierStore } from './lib/tier.store.mjs';
import { root } from './lib/bench.args.mjs';

const REPS = Number(arg('reps', 8));
const WARMUPS = 3;
const base = mkdtempSync(join(arg('dir', tmpdir()), 'mnemo-tiers-profile-'));
const G = { layers: 32, rowElems: 512 };
const CHUNKS = 8;
const CHUNK_BYTES = G.layers * 2 * 256 * G.rowElems * 4;
const BYTES = CHUNKS * CHUNK_BYTES;
const STORE = { model: 'llama-3-8b-shaped', geometry: G, chunks: CHUNKS };

/** Data-path parts, first match wins: [part, pattern over "thread dso symbol"]. */
const PARTS = [
  // crc32c_fold.cc's kernel: Run<copy, streaming> (a checksumming copy, or a checksum alone).
  ['copy with CRC32C (one fused pass)', /::Run<true, (true|false)>|Crc32cCopy|Crc32cHardwareCopy/],
  ['CRC32C alone (a second pass)', /crc32c|::Run<false, false>/i],
  ['copy', /CopyBytes|CopySegment|memcpy|memmove|copy_user|rep_movs|copy_page|copy_mc/i],
  ['journal and syncs', /fdatasync|fsync|jbd2|journal|writeback|filemap_write|file_write_and_wait/i],
  [
    'I/O submission and block layer',
    /io_uring|io_submit|io_issue|__io_|blk_|bio_|submit_bio|iomap|dio|nvme|virtio|virtblk|scsi|ext4|xfs|pread|pwrite|vfs_|iov_iter|pin_user|gup|follow_page/i,
  ],
  [
    'page faults and allocation',
    /clear_page|fault|alloc_pages|__alloc|get_page_from_freelist|mmap|munmap|zap_|free_pages|memset|huge|folio/i,
  ],
  ['thread hand-offs and scheduling', /futex|schedule|pthread_|_spin_|switch|wake_up|try_to_wake|sched|condition_variable|idle|poll/i],
  ['N-API boundary and libuv', /Napi|napi_|node::|uv_|ThreadSafe|AsyncCall|Settle|RunDetached/],
  ['JavaScript and V8 (GC included)', /v8::|Builtins_|\[JIT\]|Interpreter|LazyCompile|Scavenge|Heap|Isolate|^0x|JS:/],
];

const perfAvailable = spawnSync('perf', ['--version'], { stdio: 'ignore' }).status === 0;

/** Starts sampling this process; `stop()` ends it and returns the report's {part: share} and the top symbols. */
async function perfSampling(file) {
  if (!perfAvailable) return null;
  const p = spawn('perf', ['record', '-F', '999', '-g', '--call-graph', 'fp', '-p', String(process.pid), '-o', file], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  p.stderr.on('data', (d) => (err += d));
  await new Promise((r) => setTimeout(r, 400)); // perf attaches to every thread
  return {
    stop: async () => {
      const exited = new Promise((r) => p.on('exit', r));
      p.kill('SIGINT');
      await exited;
      return breakdown(file, err);
    },
  };
}

/** Self samples by part, over every thread (no children: each sample counts once). */
function breakdown(file, recordErr) {
  const r = spawnSync('perf', ['report', '-i', file, '--stdio', '--no-children', '--sort', 'comm,dso,sym', '-g', 'none'], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  if (r.status !== 0) return { error: `perf report failed: ${(r.stderr || recordErr).trim().slice(0, 300)}` };
  const samples = Number(
    /^# Samples: (\d+)(K?)/m
      .exec(r.stdout)
      ?.slice(1, 3)
      .reduce((n, k) => Number(n) * (k ? 1000 : 1)) ?? NaN,
  );
  const parts = Object.fromEntries([...PARTS.map(([p]) => [p, 0]), ['other', 0]]);
  const threads = {};
  const symbols = [];
  for (const line of r.stdout.split('\n')) {
    const m = /^\s+([\d.]+)%\s+(\S.*?)\s{2,}(\S.*?)\s{2,}\[[.k]\]\s+(.*)$/.exec(line);
    if (!m) continue;
    const [, pct, comm, dso, sym] = m;
    const share = Number(pct) / 100;
    const text = `${comm} ${dso} ${sym}`;
    const part = PARTS.find(([, re]) => re.test(text))?.[0] ?? 'other';
    parts[part] += share;
    threads[comm] = (threads[comm] ?? 0) + share;
    symbols.push({ share, comm, dso, sym: sym.trim().slice(0, 90), part });
  }
  const r3 = (o) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, round(v, 3)]));
  return {
    samples,
    parts: r3(parts),
    threads: r3(threads),
    top: symbols.slice(0, 15).map((s) => ({ ...s, share: round(s.share, 3) })),
  };
}

/** Runs `op` REPS times under perf, after WARMUPS (so V8 compiles the path outside the window); wall and CPU seconds per run, the device's counters. */
async function profile(name, op, ssdDevices) {
  for (let i = 0; i < WARMUPS; i++) await op(-1);
  const stats0 = ssdDevices.map((d) => d.stats());
  const perf = await perfSampling(join(base, `${name}.perf.data`));
  const walls = [];
  const cpus = [];
  const extras = [];
  for (let i = 0; i < REPS; i++) {
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    extras.push(await op(i));
    walls.push(Number(process.hrtime.bigint() - t0) / 1e9);
    const c = process.cpuUsage(c0);
    cpus.push((c.user + c.system) / 1e6);
  }
  const samples = perf ? await perf.stop() : { skipped: 'perf is not installed' };
  const stats1 = ssdDevices.map((d) => d.stats());
  const requests = stats1.reduce((n, s, i) => n + s.requests - stats0[i].requests, 0);
  console.error(`[tiers-profile] ${name}: ${round(BYTES / median(walls) / 1e9, 3)} GB/s`);
  return {
    gbs: round(BYTES / median(walls) / 1e9, 3),
    wall_s: round(median(walls), 4),
    cpu_s: round(median(cpus), 4),
    cpu_per_wall: round(median(cpus.map((c, i) => c / walls[i])), 3),
    ...(ssdDevices.length
      ? {
          ssd_requests_per_op: round(requests / REPS, 1),
          ssd_request_kib: requests ? round((BYTES * REPS) / requests / 1024, 1) : null,
          ssd_peak_in_flight: Math.max(...stats1.map((s) => s.peakInFlight)),
        }
      : {}),
    extras,
    cpu_samples: samples,
  };
}

const loadAtStart = loadavg();
try {
  const host = await openTierStore({ ...STORE, dir: join(base, 'store-mem') });
  const ssd = await openTierStore({ ...STORE, dir: join(base, 'store-ssd'), ssdPools: [join(base, 'store-ssd', 'ssd-0.pool')] });
  // One set of payloads, fresh keys per put (so none is found stored): filling 256 MiB stays out of the windows.
  const payloads = conversation(STORE, 0).map((c) => c.payload);
  const tokens = Array.from({ length: CHUNKS * 256 }, (_, i) => (i * 31) % 50_000);
  let salt = 0;
  const putOp = (store) => async () => {
    const chunks = chunkKeys(STORE.model, `profile-${++salt}`, tokens).map((key, position) => ({
      key,
      position,
      payload: payloads[position],
    }));
    const r = await store.put(salt, chunks);
    return { host_s: round(r.host, 4), readable_s: round(r.readable, 4), committed_s: round(r.committed, 4) };
  };
  const getOp = (store) => async () => {
    const layers = [];
    await store.get(undefined, layers);
    return { first_layer_s: round(layers[0], 4), median_layer_s: round(median(layers), 5), max_layer_s: round(Math.max(...layers), 4) };
  };
  const hostPut = await profile('host put', putOp(host), []);
  const hostGet = await profile('host get', getOp(host), []);
  const ssdPut = await profile('ssd put', putOp(ssd), ssd.ssdDevices);
  const ssdGet = await profile('ssd get', getOp(ssd), ssd.ssdDevices);
  await host.close();
  await ssd.close();
  const result = {
    chunks: CHUNKS,
    chunk_bytes: CHUNK_BYTES,
    reps: REPS,
    io: { ...ioInfo(), ssdBackend: ssd.backend },
    perf: perfAvailable ? 'perf record -F 999 on every thread of the process; shares of all samples in the window' : null,
    load_average: {
      start: loadAtStart.map((x) => round(x, 2)),
      end: loadavg().map((x) => round(x, 2)),
    },
    what: `each op: median wall and CPU seconds (all threads), CPU samples sorted into data-path parts (after ${WARMUPS} warm-up ops); SSD: device requests and the most in flight`,
    threads: 'mnemo-copy: the copy pool; mnemo-ssd: the SSD device worker (submits and reaps); node: the event loop, V8 and libuv threads',
    ssd_get: ssdGet,
    ssd_put: ssdPut,
    host_get: hostGet,
    host_put: hostPut,
  };
  mkdirSync(join(root, 'bench/results'), { recursive: true });
  writeFileSync(join(root, 'bench/results/tiers-profile.json'), JSON.stringify(result, null, 2) + '\n');
  console.log(JSON.stringify(result, null, 2));
} finally {
  rmSync(base, { recursive: true, force: true });
}
