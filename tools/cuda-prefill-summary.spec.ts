// @ts-expect-error: a plain ES module without types (it runs where only Node is, no build step)
import { summarizePrefill } from '../libs/native-cuda/tests/cuda_check/summarize-prefill.mjs';

/** A made-up device run of torch_long_prefill.py: the summary must compute from its lines, not type figures in. */
const lines = [
  { kind: 'device', name: 'GPU X', torch: '2.x', cuda: '13.0', layers: 2 },
  { kind: 'prefill_gemms', tokens: 4096, layer_ms: 1, tflops: 500 },
  { kind: 'prefill_attention', backend: 'flash', tokens: 4096, layer_ms: 0.5, tflops: 200 },
  { kind: 'prefill_gemms', tokens: 8192, layer_ms: 2, tflops: 600 },
  { kind: 'prefill_attention', backend: 'flash', tokens: 8192, layer_ms: 2, tflops: 300 },
  { kind: 'prefill_attention', backend: 'cudnn', tokens: 8192, layer_ms: 1, tflops: 600 },
  { kind: 'prefill_attention', backend: 'efficient', tokens: 8192, error: 'No available kernel' },
  { kind: 'prefill_gemms', tokens: 16384, layer_ms: 4, tflops: 620 },
  { kind: 'prefill_attention', backend: 'cudnn', tokens: 16384, layer_ms: 5, tflops: 480 },
  // GQA as stored is preferred over expanded heads where both were measured.
  { kind: 'gqa_attention', backend: 'cudnn', q_rows: 16384, context: 16384, layer_ms: 4, tflops: 500 },
  { kind: 'question_gemms', tokens: 128, layer_ms: 0.2, tflops: 300 },
  { kind: 'question_attention', backend: 'flash', context: 8192, q_rows: 128, error: 'No available kernel' },
  { kind: 'question_attention', backend: 'cudnn', context: 8192, q_rows: 128, layer_ms: 0.3, tflops: 80 },
];

describe('long-prefill summary', () => {
  const s = summarizePrefill(lines, { peakTflops: 1000, minTokens: 8192 });

  it('takes the fastest backend per length, preferring GQA as stored, and multiplies by the layers', () => {
    const at = (n: number) => s.prefill.find((p: { tokens: number }) => p.tokens === n);
    expect(at(8192).best_attention).toMatchObject({ backend: 'cudnn', kv_heads: 'expanded', layer_ms: 1 });
    expect(at(8192).model_prefill_s).toBeCloseTo(((2 + 1) * 2) / 1000, 6);
    expect(at(16384).best_attention).toMatchObject({ kv_heads: 'gqa', layer_ms: 4 });
    expect(at(16384).attention_share).toBeCloseTo(0.5, 6);
    expect(at(8192).attention.efficient).toBeUndefined();
  });

  it('derives the attention efficiency from long prompts only (the median of 600 and 500 ÷ peak)', () => {
    expect(s.attention_eff).toBeCloseTo(0.55, 6);
    expect(s.gemm_eff_long).toBeCloseTo(0.61, 6);
  });

  it('prices the question over a cached context from its fastest backend that ran', () => {
    expect(s.question).toEqual([
      { context: 8192, q_rows: 128, best_attention: { backend: 'cudnn', layer_ms: 0.3, tflops: 80 }, model_prefill_ms: 1 },
    ]);
  });
});
