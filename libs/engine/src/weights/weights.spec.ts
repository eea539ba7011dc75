import { join } from 'node:path';
import { scratchDir, TINY_PER_ARCHITECTURE } from '../../test/model-files.js';
import { findSyntheticModel, SYNTHETIC_MODELS } from '../model/model.catalog.js';
import { parameterCount } from '../model/model-config.js';
import { parseHfConfig } from './hf-config.parser.js';
import { loadHfModel, saveHfModel } from './hf-model.loader.js';
import { expectedTensors, TensorNames } from './model-weights.js';
import { floatToBf16, floatToHalf, halfToFloat } from './safetensors.format.js';
import { SeededPrng } from './seeded.prng.js';
import { generateSyntheticWeights, syntheticWeightsFor } from './synthetic-weights.generator.js';

describe('synthetic weights', () => {
  it('are identical on every generation and differ between tensors', () => {
    const a = syntheticWeightsFor('mnemo-tiny');
    const b = syntheticWeightsFor('mnemo-tiny');
    for (const [name, t] of a.tensors) expect(b.tensors.get(name)!.data).toEqual(t.data);
    const q0 = a.tensors.get(TensorNames.layer(0, 'self_attn.q_proj.weight'))!.data;
    const q1 = a.tensors.get(TensorNames.layer(1, 'self_attn.q_proj.weight'))!.data;
    expect(q0).not.toEqual(q1);
  });

  it('match a pinned fingerprint (the PRNG stream must never change silently)', () => {
    const rng = new SeededPrng(42);
    expect([rng.nextU32(), rng.nextU32(), rng.nextU32()]).toMatchSnapshot();
    const e = syntheticWeightsFor('mnemo-tiny').tensors.get(TensorNames.embed)!.data;
    expect(Array.from(e.subarray(0, 4), (x) => Number(x.toFixed(6)))).toMatchSnapshot();
  });

  it('linear weights have std ≈ 1/sqrt(fan_in), norm gains ≈ 1', () => {
    const w = syntheticWeightsFor('mnemo-tiny');
    const g = w.tensors.get(TensorNames.layer(0, 'mlp.gate_proj.weight'))!;
    let s = 0;
    let ss = 0;
    for (const x of g.data) {
      s += x;
      ss += x * x;
    }
    const std = Math.sqrt(ss / g.data.length - (s / g.data.length) ** 2);
    expect(std * Math.sqrt(g.shape[1])).toBeCloseTo(1, 1);
    const n = w.tensors.get(TensorNames.layer(0, 'input_layernorm.weight'))!.data;
    expect(n.reduce((a, b) => a + b, 0) / n.length).toBeCloseTo(1, 1);
  });

  it('a derived model differs from its base only in its perturbed layers', () => {
    const base = syntheticWeightsFor('mnemo-tiny');
    const ft = syntheticWeightsFor('mnemo-tiny-ft');
    const perturbed = new Set(findSyntheticModel('mnemo-tiny-ft')!.derivedFrom!.layers);
    for (const spec of expectedTensors(ft.config)) {
      const same = Buffer.from(base.tensors.get(spec.name)!.data.buffer).equals(Buffer.from(ft.tensors.get(spec.name)!.data.buffer));
      expect([spec.name, same]).toEqual([spec.name, !perturbed.has(spec.layer)]);
    }
  });

  it('every catalog model has a valid config and the tensors its config expects', () => {
    for (const m of SYNTHETIC_MODELS) {
      expect(parameterCount(m.config)).toBeGreaterThan(0);
      if (m.config.layers <= 4) {
        const w = generateSyntheticWeights(m);
        expect(w.tensors.size).toBe(expectedTensors(m.config).length);
      }
    }
  });
});

describe('safetensors + config.json', () => {
  const dir = scratchDir('mnemo-st-');

  it.each(TINY_PER_ARCHITECTURE)('%s round-trips bit-exactly through F32 files (single and sharded)', (id) => {
    const w = syntheticWeightsFor(id);
    for (const shards of [1, 3]) {
      const d = join(dir(), `${id}-${shards}`);
      saveHfModel(d, w, { shards });
      const sut = loadHfModel(d, id);
      expect(sut.config).toEqual(w.config);
      for (const [name, t] of w.tensors) {
        expect(sut.tensors.get(name)!.shape).toEqual(t.shape);
        expect(sut.tensors.get(name)!.data).toEqual(t.data);
      }
    }
  });

  it('F16 and BF16 files convert to the nearest representable fp32 values', () => {
    const w = syntheticWeightsFor('mnemo-tiny');
    for (const dtype of ['F16', 'BF16'] as const) {
      const d = join(dir(), dtype);
      saveHfModel(d, w, { dtype });
      const sut = loadHfModel(d, 'mnemo-tiny');
      const name = TensorNames.layer(1, 'mlp.up_proj.weight');
      const src = w.tensors.get(name)!.data;
      const got = sut.tensors.get(name)!.data;
      for (let i = 0; i < 200; i++) {
        const want =
          dtype === 'F16' ? halfToFloat(floatToHalf(src[i])) : new Float32Array(new Uint32Array([floatToBf16(src[i]) << 16]).buffer)[0];
        expect(got[i]).toBe(Math.fround(want));
        expect(Math.abs(got[i] - src[i])).toBeLessThanOrEqual(Math.abs(src[i]) * (dtype === 'F16' ? 1e-3 : 8e-3) + 1e-7);
      }
    }
  });

  it('half conversion handles subnormals, infinities and rounding', () => {
    expect(halfToFloat(0x3c00)).toBe(1);
    expect(halfToFloat(0x0001)).toBe(2 ** -24);
    expect(halfToFloat(0x7c00)).toBe(Infinity);
    expect(floatToHalf(1 + 2 ** -11)).toBe(0x3c00); // tie → even
    expect(floatToHalf(65520)).toBe(0x7c00);
    expect(floatToHalf(2 ** -24)).toBe(0x0001);
  });

  it('parses Llama / Qwen2 / Qwen3 config.json and refuses unsupported features', () => {
    const base = {
      num_hidden_layers: 2,
      hidden_size: 64,
      num_attention_heads: 4,
      intermediate_size: 128,
      vocab_size: 300,
      eos_token_id: [5, 6],
    };
    const llama = parseHfConfig('l', { ...base, architectures: ['LlamaForCausalLM'], num_key_value_heads: 2 });
    expect(llama).toMatchObject({ kvHeads: 2, headDim: 16, qkvBias: false, qkNorm: false, eosTokenId: 5, ropeTheta: 10000 });
    expect(parseHfConfig('q2', { ...base, architectures: ['Qwen2ForCausalLM'] })).toMatchObject({ qkvBias: true, kvHeads: 4 });
    expect(parseHfConfig('q3', { ...base, architectures: ['Qwen3ForCausalLM'], head_dim: 32 })).toMatchObject({
      qkNorm: true,
      headDim: 32,
    });
    expect(() => parseHfConfig('m', { ...base, architectures: ['MistralForCausalLM'] })).toThrow(/unsupported architecture/);
    expect(() => parseHfConfig('r', { ...base, architectures: ['LlamaForCausalLM'], rope_scaling: { type: 'llama3' } })).toThrow(
      /rope_scaling/,
    );
    expect(() => parseHfConfig('g', { ...base, architectures: ['LlamaForCausalLM'], num_key_value_heads: 3 })).toThrow(
      /multiple of kvHeads/,
    );
  });

  it('reports a missing tensor and a wrong shape by name', () => {
    const w = syntheticWeightsFor('mnemo-tiny');
    const missing = new Map(w.tensors);
    missing.delete(TensorNames.finalNorm);
    saveHfModel(join(dir(), 'm'), { ...w, tensors: missing });
    expect(() => loadHfModel(join(dir(), 'm'))).toThrow(/missing tensor model.norm.weight/);
    const wrong = new Map(w.tensors);
    wrong.set(TensorNames.finalNorm, { shape: [3], data: new Float32Array(3) });
    saveHfModel(join(dir(), 'w'), { ...w, tensors: wrong });
    expect(() => loadHfModel(join(dir(), 'w'))).toThrow(/model.norm.weight has shape \[3\]/);
  });
});
