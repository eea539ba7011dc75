import { ElasticCacheCoordinator } from '@mnemo/kv-core';
import { bits } from '../../test/bits.js';
import { cpuBackend } from '../../test/test-backend.js';
import { syntheticWeightsFor } from '../weights/synthetic-weights.generator.js';
import { ReferenceEngine } from './reference.engine.js';

const MODELS = ['mnemo-tiny', 'mnemo-tiny-qwen3'];
const GREEDY = { temperature: 0, topP: 1, seed: 0 };
const PROMPT = Array.from({ length: 150 }, (_, j) => (j * 31 + 7) % 250);

async function run(engine: ReferenceEngine): Promise<{ tokens: number[]; kv: Float32Array }> {
  const out = [(await engine.prefill([{ seqId: 's', model: 'mnemo-tiny', tokens: PROMPT, sampling: GREEDY }]))[0]!.token];
  for (let i = 0; i < 10; i++) out.push((await engine.decode(['s']))[0]!.token);
  const kv = engine.exportKv('s', { layerStart: 0, layerEnd: 4, tokenStart: 0, tokenEnd: PROMPT.length + 10 });
  return { tokens: out, kv };
}

describe('ReferenceEngine on one device budget', () => {
  it('splits the budget into regions and reserves room to grow', async () => {
    const sut = await ReferenceEngine.create({ models: MODELS, backend: 'cpu', kvBlocks: { deviceBytes: 256 * 1024 } });
    expect(MODELS.map((m) => sut.kvBudget(m).capacity)).toEqual([8, 8]);
    expect(sut.elasticMembers().map((m) => [m.id, m.maxBlocks])).toEqual([
      ['mnemo-tiny', 16],
      ['mnemo-tiny-qwen3', 16],
    ]);
    await sut.close();
  });

  it('a model grown on lent units computes the KV and tokens of one with ample memory, bit for bit', async () => {
    const sut = await ReferenceEngine.create({ models: MODELS, backend: 'cpu', kvBlocks: { deviceBytes: 256 * 1024 } });
    const coordinator = new ElasticCacheCoordinator(sut.elasticMembers(), 60_000, 'cache');
    coordinator.observe('mnemo-tiny', 0, 16 * 11);
    coordinator.tick(1);
    expect(sut.kvBudget('mnemo-tiny').capacity).toBe(11);
    expect(sut.kvBudget('mnemo-tiny-qwen3').capacity).toBe(5);
    const grown = await run(sut);
    const ample = new ReferenceEngine(
      cpuBackend(),
      MODELS.map((m) => syntheticWeightsFor(m)),
      64,
    );
    const expected = await run(ample);
    expect(grown.tokens).toEqual(expected.tokens);
    expect(bits(grown.kv)).toEqual(bits(expected.kv));
    await sut.close();
    await ample.close();
  });
});
