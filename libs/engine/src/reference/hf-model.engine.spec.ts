import { basename, join } from 'node:path';
import { bits } from '../../test/bits.js';
import { scratchDir, TINY_PER_ARCHITECTURE } from '../../test/model-files.js';
import { saveHfModel } from '../weights/hf-model.loader.js';
import { TensorNames } from '../weights/model-weights.js';
import { syntheticWeightsFor } from '../weights/synthetic-weights.generator.js';
import { ReferenceEngine } from './reference.engine.js';

const GREEDY = { temperature: 0, topP: 1, seed: 0 };
const tokens = Array.from({ length: 21 }, (_, i) => (i * 29 + 3) % 256);

describe('ReferenceEngine on a Hugging Face model directory', () => {
  const dir = scratchDir('mnemo-hf-', 'all');

  it.each(TINY_PER_ARCHITECTURE)("%s loaded from sharded safetensors gives the synthetic model's logits bit for bit", async (id) => {
    const modelDir = join(dir(), `${id}-hf`);
    saveHfModel(modelDir, syntheticWeightsFor(id), { shards: 2 });
    const sut = await ReferenceEngine.create({ models: [modelDir, id], backend: 'cpu', kvBlocks: 16 });
    const hfId = basename(modelDir);
    expect(sut.models().map((m) => m.id)).toEqual([hfId, id]);
    sut.openSequence('hf', hfId, GREEDY);
    sut.openSequence('syn', id, GREEDY);
    const [a] = await sut.step([{ seqId: 'hf', tokens, logits: 'all' }]);
    const [b] = await sut.step([{ seqId: 'syn', tokens, logits: 'all' }]);
    expect(bits(a.logits)).toEqual(bits(b.logits));
    await sut.close();
  });

  it('captures the E cache: layer 0 is the embedding of each token', async () => {
    const w = syntheticWeightsFor('mnemo-tiny');
    const sut = await ReferenceEngine.create({ models: [w], backend: 'cpu', kvBlocks: 16 });
    sut.openSequence('s', 'mnemo-tiny', GREEDY);
    const [r] = await sut.step([{ seqId: 's', tokens: tokens.slice(0, 3), logits: 'none' }], { captureLayers: [0, 2, 4] });
    const d = w.config.dModel;
    const table = w.tensors.get(TensorNames.embed)!.data;
    const expected = Float32Array.from(tokens.slice(0, 3).flatMap((t) => Array.from(table.subarray(t * d, (t + 1) * d))));
    expect(bits(r.eCache.get(0)!)).toEqual(bits(expected));
    expect(r.eCache.get(2)!.length).toBe(3 * d);
    expect(r.logits.length).toBe(0);
    await expect(sut.step([{ seqId: 's', tokens: [1] }], { captureLayers: [5] })).rejects.toMatchObject({ code: 'invalid_request' });
    await sut.close();
  });
});
