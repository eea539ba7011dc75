#!/usr/bin/env node
// Folds a device run of torch_long_prefill.py (its JSON lines, in one or more *.jsonl files of a
// folder, and gpu.csv) into bench/results/engine-cuda-prefill.json:
//   node libs/native-cuda/tests/cuda_check/summarize-prefill.mjs OUT_DIR [--date YYYY-MM-DD] > bench/results/engine-cuda-prefill.json
// Every figure is computed from the run's lines; nothing is typed in. The pure part
// (summarizePrefill()) is exported for its spec.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const round = (x, d = 3) => (x === null || x === undefined || !Number.isFinite(x) ? null : Number(x.toFixed(d)));
const median = (xs) => {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/**
 * lines: the script's JSON objects. Returns, per prompt length, the layer's GEMMs and each attention
 * backend's time, the whole model's prefill (× layers) with the fastest backend, and the attention
 * efficiency the twin's H200 row takes: the median over lengths ≥ 8K of the fastest backend's
 * causal full-prompt TFLOP/s, KV heads read as stored (GQA) where measured, expanded otherwise.
 */
export function summarizePrefill(lines, { peakTflops = 989, minTokens = 8192 } = {}) {
  const device = lines.find((l) => l.kind === 'device') ?? {};
  const layers = device.layers ?? 32;
  const ok = (l) => typeof l.layer_ms === 'number';
  const gemms = new Map(lines.filter((l) => l.kind === 'prefill_gemms').map((l) => [l.tokens, l]));
  const attn = lines.filter((l) => l.kind === 'prefill_attention' && ok(l));
  const gqa = lines.filter((l) => l.kind === 'gqa_attention' && ok(l) && l.q_rows === l.context);
  const lengths = [...gemms.keys()].sort((a, b) => a - b);
  const prefill = lengths.map((n) => {
    const byBackend = Object.fromEntries(
      attn.filter((l) => l.tokens === n).map((l) => [l.backend, { layer_ms: round(l.layer_ms), tflops: round(l.tflops, 1) }]),
    );
    const gqaHere = gqa.filter((l) => l.q_rows === n);
    const candidates = gqaHere.length ? gqaHere : attn.filter((l) => l.tokens === n);
    const best = candidates.reduce((b, l) => (b === null || l.layer_ms < b.layer_ms ? l : b), null);
    const g = gemms.get(n);
    return {
      tokens: n,
      gemms_layer_ms: round(g.layer_ms),
      gemms_tflops: round(g.tflops, 1),
      attention: byBackend,
      best_attention: best
        ? {
            backend: best.backend,
            kv_heads: gqaHere.length ? 'gqa' : 'expanded',
            layer_ms: round(best.layer_ms),
            tflops: round(best.tflops, 1),
          }
        : null,
      model_prefill_s: best ? round(((g.layer_ms + best.layer_ms) * layers) / 1000) : null,
      attention_share: best ? round(best.layer_ms / (g.layer_ms + best.layer_ms)) : null,
    };
  });
  const long = prefill.filter((p) => p.tokens >= minTokens && p.best_attention);
  const questionGemm = median(lines.filter((l) => l.kind === 'question_gemms' && ok(l)).map((l) => l.layer_ms));
  const question = [...new Set(lines.filter((l) => l.kind === 'question_attention').map((l) => l.context))]
    .sort((a, b) => a - b)
    .map((ctx) => {
      const rows = [
        ...lines.filter((l) => l.kind === 'question_attention' && l.context === ctx && ok(l)),
        ...lines.filter((l) => l.kind === 'gqa_attention' && ok(l) && l.q_rows !== l.context && l.context - l.q_rows === ctx),
      ];
      const best = rows.reduce((b, l) => (b === null || l.layer_ms < b.layer_ms ? l : b), null);
      return {
        context: ctx,
        q_rows: 128,
        best_attention: best ? { backend: best.backend, layer_ms: round(best.layer_ms), tflops: round(best.tflops, 1) } : null,
        model_prefill_ms: best && questionGemm !== null ? round((questionGemm + best.layer_ms) * layers, 1) : null,
      };
    });
  const gemmLong = prefill.filter((p) => p.tokens >= minTokens).map((p) => p.gemms_tflops);
  return {
    device: device.name ?? null,
    torch: device.torch ?? null,
    cuda: device.cuda ?? null,
    model_shape: { name: 'llama-3.1-8b', layers, hidden: 4096, heads: 32, kv_heads: 8, head_dim: 128, ffn: 14336 },
    prefill,
    question,
    attention_eff: round(median(long.map((p) => p.best_attention.tflops)) / peakTflops, 4),
    attention_eff_from: `median over prompts of ${minTokens}+ tokens of the fastest backend's causal attention TFLOP/s, ÷ ${peakTflops} TFLOP/s`,
    gemm_eff_long: round(median(gemmLong) / peakTflops, 4),
  };
}

function main() {
  const dir = process.argv[2];
  if (!dir || !existsSync(dir)) {
    console.error('usage: summarize-prefill.mjs OUT_DIR [--date YYYY-MM-DD]');
    process.exit(2);
  }
  const at = process.argv.indexOf('--date');
  const date = at > 0 ? process.argv[at + 1] : new Date().toISOString().slice(0, 10);
  const lines = readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .sort()
    .flatMap((f) =>
      readFileSync(join(dir, f), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
    );
  // gpu.csv: name, max SM clock, current SM clock, power limit (nvidia-smi's csv, header first).
  const csv = existsSync(join(dir, 'gpu.csv')) ? readFileSync(join(dir, 'gpu.csv'), 'utf8').trim().split('\n').pop().split(', ') : null;
  const gpuCsv = csv ? `${csv[0]} (max SM clock ${csv[1]}, power limit ${csv[3]})` : null;
  const out = {
    bench: 'engine-cuda-prefill',
    date,
    run: {
      date,
      command: 'python3 libs/native-cuda/tests/cuda_check/torch_long_prefill.py (on the lent GPU), then summarize-prefill.mjs here',
      machine: { gpu: gpuCsv, host: "the device tool's GPU machine (16 cores)" },
      note: 'PyTorch at Llama-3.1-8B shapes with seeded random bf16 weights: the ground truth the twin prices long-context prefill against. A GPU is lent to few sessions: the figures stand until the next lent run.',
    },
    ...summarizePrefill(lines),
  };
  process.stdout.write(JSON.stringify(out, null, 1) + '\n');
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) main();
