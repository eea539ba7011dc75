import { cpuBackend } from '../../test/test-backend.js';
import { findSyntheticModel } from '../model/model.catalog.js';
import { ReferenceEngine } from '../reference/reference.engine.js';
import { syntheticWeightsFor } from './synthetic-weights.generator.js';
import { rotateHeadBases } from './head-basis.rotation.js';

const GREEDY = { temperature: 0, topP: 1, seed: 0 };
const tokens = Array.from({ length: 23 }, (_, i) => (i * 31 + 5) % 256);

describe(rotateHeadBases.name, () => {
  it("keeps the model's function while replacing the rotated layers' KV", async () => {
    const spec = findSyntheticModel('mnemo-small-ds24')!;
    const base = syntheticWeightsFor('mnemo-small');
    // Rotation only (no noise) of a copy of the base, under another id so both load side by side.
    const tensors = new Map([...base.tensors].map(([k, t]) => [k, { shape: t.shape, data: t.data.slice() }]));
    for (const l of spec.derivedFrom!.layers) rotateHeadBases(tensors, base.config, l, spec.derivedFrom!.seed);
    const rotated = { config: { ...base.config, id: 'rotated' }, tensors };
    const sut = new ReferenceEngine(cpuBackend(), [base, rotated], 16);
    try {
      const run = async (model: string) => {
        sut.openSequence(model, model, GREEDY);
        const [r] = await sut.step([{ seqId: model, tokens, logits: 'all' }]);
        const kv = (l: number) => sut.exportKv(model, { layerStart: l, layerEnd: l + 1, tokenStart: 0, tokenEnd: tokens.length });
        return { logits: r!.logits, kv };
      };
      const base = await run('mnemo-small');
      const rot = await run('rotated');
      let maxDiff = 0;
      for (let i = 0; i < base.logits.length; i++) maxDiff = Math.max(maxDiff, Math.abs(base.logits[i]! - rot.logits[i]!));
      expect(maxDiff).toBeLessThan(1e-3);
      const relDiff = (x: Float32Array, y: Float32Array) => {
        let num = 0;
        let den = 0;
        for (let i = 0; i < x.length; i++) {
          num += (x[i]! - y[i]!) ** 2;
          den += x[i]! ** 2;
        }
        return Math.sqrt(num / den);
      };
      expect(relDiff(base.kv(1), rot.kv(1))).toBe(0); // below the rotated band: the same KV
      expect(relDiff(base.kv(2), rot.kv(2))).toBeGreaterThan(0.5); // rotated: unrelated KV
      expect(relDiff(base.kv(4), rot.kv(4))).toBeLessThan(1e-4); // above it: the same up to rounding
    } finally {
      await sut.close();
    }
    // Generous: weight generation alone takes tens of seconds under jest on a loaded machine.
  }, 300_000);

  it('refuses models whose q/k norm or bias would not commute with the rotation', () => {
    const w = syntheticWeightsFor('mnemo-tiny-qwen3');
    expect(() => rotateHeadBases(new Map(w.tensors), w.config, 0, 1)).toThrow(/q\/k norm/);
  });
});
