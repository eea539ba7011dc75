// Reference engine throughput: prefill and decode tokens/s for three synthetic model sizes on
// the CPU backend (and CUDA when a GPU is present). Writes bench/results/engine.{json,svg}.
// Run: npm run bench -- engine   (or `npx tsc -b && node bench/engine.bench.mjs [--quick]`)
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parameterCount, ReferenceEngine, syntheticWeightsFor } from '@mnemo/engine';
import { createKernelBackend } from '@mnemo/native-cuda';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const quick = process.argv.includes('--quick');
const GREEDY = { temperature: 0, topP: 1, seed: 0 };
// Prompt length, decode batch and decode steps per model: sized so the whole run stays
// under ~2 minutes on 2 cores while each figure averages over enough work to be stable.
const PLAN = [
  { model: 'mnemo-tiny', prompt: 1024, batch: 8, steps: 128 },
  { model: 'mnemo-small', prompt: 512, batch: 8, steps: 64 },
  { model: 'mnemo-medium', prompt: 256, batch: 8, steps: 24 },
];

const prompt = (n, salt) => Array.from({ length: n }, (_, i) => (i * 31 + salt * 7 + 1) % 256);

async function measure(backend, weights, p) {
  const blocks = Math.ceil((p.prompt + 16) / 16) * 2 + p.batch * Math.ceil((32 + p.steps + 16) / 16);
  const engine = new ReferenceEngine(backend, [weights], blocks);
  const id = weights.config.id;
  const reps = quick ? 1 : 3;
  // Warm-up: first touches of weights/caches and native pool start-up are not throughput.
  await engine.prefill([{ seqId: 'warm', model: id, tokens: prompt(32, 0), sampling: GREEDY }]);
  await engine.decode(['warm']);
  engine.release('warm');

  let prefillMs = Infinity;
  for (let r = 0; r < reps; r++) {
    const t0 = performance.now();
    await engine.prefill([{ seqId: `p${r}`, model: id, tokens: prompt(p.prompt, r), sampling: GREEDY }]);
    prefillMs = Math.min(prefillMs, performance.now() - t0);
    engine.release(`p${r}`);
  }

  const seqs = Array.from({ length: p.batch }, (_, i) => `d${i}`);
  await engine.prefill(seqs.map((seqId, i) => ({ seqId, model: id, tokens: prompt(32, i + 1), sampling: GREEDY })));
  const t0 = performance.now();
  for (let s = 0; s < p.steps; s++) await engine.decode(seqs);
  const decodeMs = performance.now() - t0;
  await engine.close();
  return {
    model: id,
    params: parameterCount(weights.config),
    prefill_tokens: p.prompt,
    prefill_tok_s: round((p.prompt / prefillMs) * 1000),
    decode_batch: p.batch,
    decode_steps: p.steps,
    decode_tok_s: round(((p.batch * p.steps) / decodeMs) * 1000),
  };
}

function round(x) {
  return Math.round(x * 10) / 10;
}

async function run(kind, backend) {
  const rows = [];
  for (const p of PLAN) {
    const weights = syntheticWeightsFor(p.model);
    const row = await measure(backend, weights, p);
    console.log(JSON.stringify({ backend: kind, ...row }));
    rows.push(row);
  }
  return rows;
}

function svg(result) {
  const series = [
    { key: 'cpu', color: '#4e79a7' },
    { key: 'cuda', color: '#f28e2b' },
  ].filter((s) => result[s.key].length > 0);
  const panels = [
    { title: 'prefill tokens/s', field: 'prefill_tok_s' },
    { title: 'decode tokens/s (batched)', field: 'decode_tok_s' },
  ];
  const W = 360;
  const H = 260;
  const models = PLAN.map((p) => p.model);
  const parts = [];
  panels.forEach((panel, pi) => {
    const x0 = pi * W + 50;
    const values = series.flatMap((s) => result[s.key].map((r) => r[panel.field]));
    const max = Math.max(...values, 1);
    // Log scale: sizes differ by orders of magnitude in parameters.
    const top = Math.ceil(Math.log10(max));
    const y = (v) => 210 - (Math.log10(Math.max(v, 1)) / top) * 180;
    parts.push(`<text x="${x0 + 140}" y="20" text-anchor="middle" font-size="13">${panel.title} (log)</text>`);
    for (let e = 0; e <= top; e++) {
      parts.push(`<line x1="${x0}" x2="${x0 + 290}" y1="${y(10 ** e)}" y2="${y(10 ** e)}" stroke="#ddd"/>`);
      parts.push(`<text x="${x0 - 5}" y="${y(10 ** e) + 4}" text-anchor="end" font-size="10">1e${e}</text>`);
    }
    const group = 290 / models.length;
    const bw = (group - 16) / series.length;
    models.forEach((m, mi) => {
      series.forEach((s, si) => {
        const row = result[s.key].find((r) => r.model === m);
        if (!row) return;
        const v = row[panel.field];
        const bx = x0 + mi * group + 8 + si * bw;
        parts.push(`<rect x="${bx}" y="${y(v)}" width="${bw - 2}" height="${210 - y(v)}" fill="${s.color}"/>`);
        parts.push(`<text x="${bx + bw / 2}" y="${y(v) - 3}" text-anchor="middle" font-size="9">${Math.round(v)}</text>`);
      });
      parts.push(`<text x="${x0 + mi * group + group / 2}" y="228" text-anchor="middle" font-size="10">${m.replace('mnemo-', '')}</text>`);
    });
  });
  series.forEach((s, i) => {
    parts.push(`<rect x="${60 + i * 90}" y="244" width="10" height="10" fill="${s.color}"/><text x="${74 + i * 90}" y="253" font-size="11">${s.key}</text>`);
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W * 2}" height="${H}" font-family="sans-serif">\n<rect width="100%" height="100%" fill="white"/>\n${parts.join('\n')}\n</svg>\n`;
}

const result = { cpu: [], cuda: [] };
const cpu = createKernelBackend('cpu');
result.cpu = await run('cpu', cpu);
let cudaBackend = null;
try {
  cudaBackend = createKernelBackend('cuda');
} catch (e) {
  result.cuda_skipped = e instanceof Error ? e.message : String(e);
  console.log(`cuda skipped: ${result.cuda_skipped}`);
}
if (cudaBackend) result.cuda = await run('cuda', cudaBackend);
result.env = { node: process.version, cpu: cpus()[0]?.model ?? 'unknown', cpu_threads: cpu.threads ?? cpus().length, quick };

mkdirSync(join(root, 'bench/results'), { recursive: true });
writeFileSync(join(root, 'bench/results/engine.json'), JSON.stringify(result, null, 2) + '\n');
writeFileSync(join(root, 'bench/results/engine.svg'), svg(result));
console.log('wrote bench/results/engine.json and engine.svg');
