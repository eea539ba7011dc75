#!/usr/bin/env node
// Folds a device run of run_device.sh (check.jsonl, perf.jsonl, torch.jsonl, gpu.csv in one
// folder) into bench/results/engine-cuda.json:
//   node libs/native-cuda/tests/cuda_check/summarize.mjs OUT_DIR [--date YYYY-MM-DD] > bench/results/engine-cuda.json
// Every figure is computed from the run's own lines; nothing is typed in. The pure part
// (summarize()) is exported for its spec.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const round = (x, d = 3) => (x === null || x === undefined || !Number.isFinite(x) ? null : Number(x.toFixed(d)));
const geomean = (xs) => (xs.length === 0 ? null : Math.exp(xs.reduce((a, x) => a + Math.log(x), 0) / xs.length));

/** PCIe per-direction payload bandwidth in GB/s: GT/s per lane × lanes × encoding / 8. */
export function pcieNominalGbs(gen, width) {
  const perLane = { 1: 2.5 * 0.8, 2: 5 * 0.8, 3: 8 * (128 / 130), 4: 16 * (128 / 130), 5: 32 * (128 / 130), 6: 64 * (242 / 256) }[gen];
  return perLane === undefined || !(width > 0) ? null : (perLane * width) / 8;
}

/** Least-squares fit of seconds per call = a + bytes / bw; returns { us: a in µs, gbs: bw }. */
export function fitDispatch(points) {
  const n = points.length;
  if (n < 2) return null;
  const xs = points.map((p) => p.bytes),
    ys = points.map((p) => p.us_per_call);
  const mx = xs.reduce((a, b) => a + b, 0) / n,
    my = ys.reduce((a, b) => a + b, 0) / n;
  let sxy = 0,
    sxx = 0;
  for (let i = 0; i < n; i++) {
    sxy += (xs[i] - mx) * (ys[i] - my);
    sxx += (xs[i] - mx) ** 2;
  }
  const slope = sxy / sxx; // µs per byte
  return { us: round(my - slope * mx, 2), gbs: round(1 / slope / 1e3, 1) };
}

export function summarize({ check, perf, torch, gpuCsv, date }) {
  const ops = {};
  const attentionPaths = {};
  for (const l of check.filter((l) => l.kind === 'op' && l.sut.includes('/attention-'))) {
    const [dtype, path] = l.sut.replace(/^cuda-/, '').split('/attention-');
    (attentionPaths[path] ??= {})[dtype] = { cases: l.cases, worst: round(l.worst, 4), pass: l.pass };
  }
  for (const l of check.filter((l) => l.kind === 'op' && !l.sut.includes('/'))) {
    const dtype = l.sut.replace(/^cuda-/, '');
    ops[l.op] ??= {};
    ops[l.op][dtype] = {
      cases: l.cases,
      worst: round(l.worst, 4),
      rtol: l.rtol,
      pass: l.pass,
      worst_case: l.worst_case,
      ...(l.error ? { error: l.error } : {}),
    };
  }
  const opNames = Object.keys(ops);
  const passed = opNames.filter((op) => Object.values(ops[op]).length > 0 && Object.values(ops[op]).every((r) => r.pass));
  const device = perf.find((l) => l.kind === 'device') ?? {};

  // GEMM: the path the engine takes by default (auto) at each m, against torch.matmul.
  const tg = new Map(torch.filter((l) => l.kind === 'torch_gemm').map((l) => [`${l.shape}/${l.m}`, l]));
  const gemmLines = perf.filter((l) => l.kind === 'gemm');
  const gemm = [];
  const byPath = {};
  for (const l of gemmLines) {
    const t = tg.get(`${l.shape}/${l.m}`);
    if (!t) continue;
    const frac = t.ms / l.ms;
    if (l.m >= 512) (byPath[l.path] ??= []).push(frac);
    if (l.engine_default) {
      gemm.push({
        shape: l.shape,
        m: l.m,
        n: l.n,
        k: l.k,
        path: l.path,
        ms: round(l.ms, 4),
        torch_ms: round(t.ms, 4),
        tflops: round(l.tflops, 1),
        torch_tflops: round(t.tflops, 1),
        frac_of_torch: round(frac),
      });
    }
  }
  const gemmByPath = Object.fromEntries(Object.entries(byPath).map(([p, f]) => [p, round(geomean(f))]));

  const ta = new Map(torch.filter((l) => l.kind === 'torch_attention').map((l) => [`${l.mode}/${l.ctx}`, l]));
  // Lines without a path come from runs before the split and flash kernels: the simple kernel.
  const attentionAll = perf
    .filter((l) => l.kind === 'attention')
    .map((l) => {
      const t = ta.get(`${l.mode}/${l.ctx}`);
      return {
        path: l.path ?? 'simple',
        engine_default: l.engine_default ?? true,
        mode: l.mode,
        ctx: l.ctx,
        seqs: l.seqs,
        q_rows: l.q_rows,
        ms: round(l.ms, 3),
        torch_ms: t ? round(t.ms, 3) : null,
        frac_of_torch: t ? round(t.ms / l.ms, 4) : null,
      };
    });
  const attention = attentionAll.filter((a) => a.engine_default);
  const attentionByPath = {};
  for (const a of attentionAll) if (a.frac_of_torch > 0) (attentionByPath[a.path] ??= []).push(a.frac_of_torch);

  const plain = Object.fromEntries(perf.filter((l) => l.kind === 'copy_plain').map((l) => [l.dir, l.gbs]));
  const ranges = perf.filter((l) => l.kind === 'copy_ranges');
  const bestRanges = (dir) => Math.max(...ranges.filter((l) => l.dir === dir && l.gbs).map((l) => l.gbs), 0) || null;
  const [name, genMax, widthMax, genCur, widthCur] = (gpuCsv ?? '').split(',').map((s) => s.trim());
  const nominal = pcieNominalGbs(Number(genMax), Number(widthMax));
  const sizes = perf.filter((l) => l.kind === 'copy_size');
  const fit = Object.fromEntries(['h2d', 'd2h'].map((d) => [d, fitDispatch(sizes.filter((l) => l.dir === d))]));
  const swaps = perf.filter((l) => l.kind === 'swap');
  const swapGbs = (dir, scheme) => swaps.find((l) => l.dir === dir && l.scheme === scheme)?.gbs ?? null;
  const groupVsLayer = ['out', 'in'].map((d) => {
    const g = swapGbs(d, 'block-group-20'),
      b = swapGbs(d, 'per-block-per-layer');
    return g && b ? g / b : null;
  });
  const dispatchUs = [fit.h2d?.us, fit.d2h?.us].filter((x) => Number.isFinite(x));

  return {
    bench: 'engine-cuda',
    date,
    run: {
      date,
      command: 'bash libs/native-cuda/tests/cuda_check/run_device.sh full (on the lent GPU), then summarize.mjs here',
      machine: {
        gpu: `${device.name ?? name ?? 'unknown GPU'}, CUDA ${device.runtime ?? '?'}, driver ${device.driver ?? '?'}`,
        host: "the device tool's GPU machine (16 cores)",
      },
      note: 'A GPU is lent to few sessions: the figures stand until the next lent run.',
    },
    device: device.name ?? name ?? null,
    machine: {
      compute_capability: device.cc ?? null,
      sms: device.sms ?? null,
      memory_gb: round(device.memory_gb, 1),
      cuda_runtime: device.runtime ?? null,
      driver: device.driver ?? null,
      pcie: genMax
        ? { gen_max: Number(genMax), width_max: Number(widthMax), gen_current: Number(genCur), width_current: Number(widthCur) }
        : null,
      cublas: device.cublas ? { library: device.cublas_library, version: device.cublas_version } : { error: device.cublas_error ?? null },
      torch: torch.find((l) => l.kind === 'torch_device') ?? null,
    },
    ops_passed: passed.length,
    ops_total: opNames.length,
    ops,
    attention_paths_checked: attentionPaths,
    gemm_path: { prefill: device.gemm_path_prefill ?? null, decode: device.gemm_path_decode ?? null },
    // Compute-bound shapes only (m >= 512): below that a torch.matmul call from Python costs
    // more on the host than the product on the GPU, so small-m ratios measure launch paths.
    gemm_frac_of_torch: round(
      geomean(
        gemm
          .filter((g) => g.m >= 512)
          .map((g) => g.frac_of_torch)
          .filter((x) => x > 0),
      ),
    ),
    gemm_frac_of_torch_small_m: round(
      geomean(
        gemm
          .filter((g) => g.m < 512)
          .map((g) => g.frac_of_torch)
          .filter((x) => x > 0),
      ),
    ),
    gemm_frac_of_torch_by_path: gemmByPath,
    gemm,
    batch_invariance: Object.fromEntries(perf.filter((l) => l.kind === 'batch_invariance').map((l) => [l.path, l.identical])),
    attention_frac_of_torch: round(geomean(attention.map((a) => a.frac_of_torch).filter((x) => x > 0)), 4),
    attention_frac_of_torch_by_path: Object.fromEntries(Object.entries(attentionByPath).map(([p, f]) => [p, round(geomean(f), 4)])),
    attention,
    attention_all_paths: attentionAll,
    h2d_frac_of_link: plain.h2d && bestRanges('h2d') ? round(bestRanges('h2d') / plain.h2d) : null,
    h2d_frac_of_nominal: nominal && bestRanges('h2d') ? round(bestRanges('h2d') / nominal) : null,
    link: {
      nominal_gbs: round(nominal, 1),
      plain_h2d_gbs: round(plain.h2d, 1),
      plain_d2h_gbs: round(plain.d2h, 1),
      torch_h2d_gbs: round(torch.find((l) => l.kind === 'torch_copy' && l.dir === 'h2d')?.gbs, 1),
      ranges_2mib: ranges.map((l) => ({ dir: l.dir, submit: l.submit, gbs: round(l.gbs, 1), ...(l.error ? { error: l.error } : {}) })),
    },
    swap_group_vs_block_gbs: round(geomean(groupVsLayer.filter((x) => x > 0))),
    swap_group_vs_block_gbs_by_dir: { out: round(groupVsLayer[0]), in: round(groupVsLayer[1]) },
    swap_dispatch_us_per_call: dispatchUs.length ? round(dispatchUs.reduce((a, b) => a + b, 0) / dispatchUs.length, 2) : null,
    dispatch_fit: fit,
    copy_sizes: sizes.map((l) => ({ dir: l.dir, bytes: l.bytes, us_per_call: round(l.us_per_call, 2), gbs: round(l.gbs, 2) })),
    swaps: swaps.map((l) => ({
      dir: l.dir,
      scheme: l.scheme,
      calls: l.calls,
      ms: round(l.ms, 2),
      gbs: round(l.gbs, 2),
      us_per_call: round(l.us_per_call, 2),
      ...(l.error ? { error: l.error } : {}),
    })),
    overlap: perf.find((l) => l.kind === 'overlap') ?? null,
    errors: [...perf, ...torch, ...check].filter((l) => /error|skipped/.test(l.kind)),
    targets: { gemm_frac_of_torch: '>= 0.7', h2d_frac_of_link: '>= 0.8', ops_passed: '== ops_total' },
  };
}

function readLines(path) {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const dir = process.argv[2];
  if (!dir) {
    console.error('usage: summarize.mjs OUT_DIR [--date YYYY-MM-DD]');
    process.exit(2);
  }
  const di = process.argv.indexOf('--date');
  const date = di > 0 ? process.argv[di + 1] : new Date().toISOString().slice(0, 10);
  const gpu = join(dir, 'gpu.csv');
  const out = summarize({
    check: readLines(join(dir, 'check.jsonl')),
    perf: readLines(join(dir, 'perf.jsonl')),
    torch: readLines(join(dir, 'torch.jsonl')),
    gpuCsv: existsSync(gpu) ? readFileSync(gpu, 'utf8').split('\n')[0] : '',
    date,
  });
  process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
}
