import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { chunkKeys } from '@mnemo/kv-core';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuBackend } from '../../test/test-backend.js';
import { ReferenceEngine } from '../reference/reference.engine.js';
import { resolveWeights } from '../reference/weights.resolver.js';
import { saveHfModel } from './hf-model.loader.js';
import { adapterBaseDir, isLoraAdapterDir, loadLoraMerged } from './lora-adapter.loader.js';
import type { HostTensor } from './model-weights.js';
import { writeSafetensors } from './safetensors.format.js';
import { SeededPrng } from './seeded.prng.js';
import { syntheticWeightsFor } from './synthetic-weights.generator.js';

const R = 2;
const ALPHA = 4;

function randomTensor(rng: SeededPrng, shape: number[]): HostTensor {
  const n = shape.reduce((a, b) => a * b, 1);
  return { shape, data: Float32Array.from({ length: n }, () => (rng.nextU32() / 2 ** 32 - 0.5) * 0.2) };
}

describe('LoRA adapters (PEFT layout), merged into their base', () => {
  let root: string;
  const base = syntheticWeightsFor('mnemo-tiny');
  const c = base.config;
  const q = c.heads * c.headDim;
  const kv = c.kvHeads * c.headDim;

  /** Writes an adapter beside `root/base` with the given tensors and config overrides; returns its directory. */
  function adapter(name: string, tensors: Map<string, HostTensor>, cfg: Record<string, unknown> = {}): string {
    const dir = join(root, name);
    mkdirSync(dir, { recursive: true });
    writeSafetensors(join(dir, 'adapter_model.safetensors'), tensors);
    const config = { peft_type: 'LORA', base_model_name_or_path: 'base', r: R, lora_alpha: ALPHA, target_modules: ['q_proj', 'v_proj'] };
    writeFileSync(join(dir, 'adapter_config.json'), JSON.stringify({ ...config, ...cfg }));
    return dir;
  }

  function qvAdapter(seed: number): Map<string, HostTensor> {
    const rng = new SeededPrng(seed);
    const t = new Map<string, HostTensor>();
    for (let l = 0; l < c.layers; l++) {
      const p = `base_model.model.model.layers.${l}.self_attn.`;
      t.set(p + 'q_proj.lora_A.weight', randomTensor(rng, [R, c.dModel]));
      t.set(p + 'q_proj.lora_B.weight', randomTensor(rng, [q, R]));
      t.set(p + 'v_proj.lora_A.weight', randomTensor(rng, [R, c.dModel]));
      t.set(p + 'v_proj.lora_B.weight', randomTensor(rng, [kv, R]));
    }
    return t;
  }

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'lora-'));
    saveHfModel(join(root, 'base'), base);
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('merges W + (alpha / r) B A into the adapted projections and leaves every other tensor as the base has it', () => {
    const t = qvAdapter(7);
    const dir = adapter('qv', t);
    expect(isLoraAdapterDir(dir)).toBe(true);
    expect(isLoraAdapterDir(join(root, 'base'))).toBe(false);
    expect(adapterBaseDir(dir)).toBe(join(root, 'base'));
    const sut = loadLoraMerged(dir);
    expect(sut.config).toEqual({ ...c, id: 'qv' });
    for (const [name, w] of base.tensors) {
      const m = /^model\.layers\.(\d+)\.self_attn\.(q|v)_proj\.weight$/.exec(name);
      const got = sut.tensors.get(name)!;
      if (!m) {
        expect(got.data).toEqual(w.data);
        continue;
      }
      const p = `base_model.model.model.layers.${m[1]}.self_attn.${m[2]}_proj.`;
      const A = t.get(p + 'lora_A.weight')!;
      const B = t.get(p + 'lora_B.weight')!;
      const [out, inp] = w.shape as [number, number];
      let worst = 0;
      for (let o = 0; o < out; o++)
        for (let i = 0; i < inp; i++) {
          let d = 0;
          for (let k = 0; k < R; k++) d += B.data[o * R + k]! * A.data[k * inp + i]!;
          worst = Math.max(worst, Math.abs(got.data[o * inp + i]! - (w.data[o * inp + i]! + (ALPHA / R) * d)));
        }
      expect(worst).toBeLessThan(1e-6);
      expect(got.data).not.toEqual(w.data);
    }
  });

  it('is served by the reference engine under its own id, with outputs of its own', async () => {
    const dir = adapter('served', qvAdapter(11));
    const engine = new ReferenceEngine(cpuBackend(), [resolveWeights(join(root, 'base')), resolveWeights(dir)], 32);
    try {
      const logits: Float32Array[] = [];
      for (const m of ['base', 'served']) {
        engine.openSequence(m, m, { temperature: 0, topP: 1, seed: 0 });
        const [r] = await engine.step([{ seqId: m, tokens: [1, 2, 3, 4, 5] }]);
        logits.push(Float32Array.from(r!.logits));
        engine.release(m);
      }
      expect(logits[1]).not.toEqual(logits[0]);
    } finally {
      await engine.close();
    }
  });

  it("keys its KV apart from its base's: the merged model's own id names every chunk", () => {
    const sut = loadLoraMerged(adapter('keyed', qvAdapter(13)));
    const tokens = Array.from({ length: 600 }, (_, i) => i % 200);
    const mine = chunkKeys(sut.config.id, 't', tokens);
    const base = chunkKeys('base', 't', tokens);
    expect(mine.length).toBe(base.length);
    for (let i = 0; i < mine.length; i++) expect(Buffer.from(mine[i]!).equals(Buffer.from(base[i]!))).toBe(false);
  });

  it('a zero B (a freshly initialised adapter) is the base exactly', () => {
    const t = qvAdapter(3);
    for (const [k, v] of t) if (k.endsWith('lora_B.weight')) t.set(k, { shape: v.shape, data: new Float32Array(v.data.length) });
    const sut = loadLoraMerged(adapter('zero', t));
    for (const [name, w] of base.tensors) expect(sut.tensors.get(name)!.data).toEqual(w.data);
  });

  const bad: Array<[string, (t: Map<string, HostTensor>) => void, Record<string, unknown>, RegExp]> = [
    ['not LoRA', () => {}, { peft_type: 'IA3' }, /peft_type/],
    ['DoRA', () => {}, { use_dora: true }, /DoRA/],
    ['unknown target module', () => {}, { target_modules: ['q_proj', 'v_proj', 'lm_head'] }, /lm_head/],
    ['no base', () => {}, { base_model_name_or_path: 'nowhere' }, /not a model directory/],
    ['module not in target_modules', () => {}, { target_modules: ['q_proj'] }, /not in target_modules/],
    ['A without B', (t) => t.delete('base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight'), {}, /both lora_A and lora_B/],
    ['wrong rank', () => {}, { r: 3 }, /do not fit/],
    [
      'layer past the base',
      (t) =>
        t.set(`base_model.model.model.layers.${c.layers}.self_attn.q_proj.lora_A.weight`, {
          shape: [R, c.dModel],
          data: new Float32Array(R * c.dModel),
        }),
      {},
      /past the base/,
    ],
  ];
  it.each(bad)('refuses %s with a clear error', (name, edit, cfg, message) => {
    const t = qvAdapter(5);
    edit(t);
    expect(() => loadLoraMerged(adapter(`bad-${name.replace(/\W+/g, '-')}`, t, cfg))).toThrow(message);
  });
});
