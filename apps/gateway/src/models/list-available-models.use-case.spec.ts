import { create } from '@bufbuild/protobuf';
import { ModelInfoSchema, type ModelInfo } from '@mnemo/proto';
import type { GatewayConfig } from '../config/gateway.config.js';
import type { ClusterModelCache } from './cluster-model.cache.js';
import { ListAvailableModelsUseCase } from './list-available-models.use-case.js';

const info = (id: string, maxContext = 4096): ModelInfo => create(ModelInfoSchema, { id, engine: 'reference', maxContext });

function sut(served: ModelInfo[], defaultModel: string): ListAvailableModelsUseCase {
  const cache = { list: () => Promise.resolve(served) } as unknown as ClusterModelCache;
  return new ListAvailableModelsUseCase(cache, { defaultModel } as GatewayConfig);
}

describe(ListAvailableModelsUseCase.name, () => {
  it.each([
    {
      served: ['mnemo-tiny', 'fortune-base', 'fortune-songs'],
      def: 'fortune-base',
      listed: ['fortune-base', 'mnemo-tiny', 'fortune-songs'],
    },
    { served: ['fortune-base', 'mnemo-tiny'], def: 'fortune-base', listed: ['fortune-base', 'mnemo-tiny'] },
    { served: ['mnemo-tiny', 'fortune-songs'], def: 'fortune-base', listed: ['mnemo-tiny', 'fortune-songs'] },
    { served: ['mnemo-tiny', 'fortune-songs'], def: 'fortune-songs', listed: ['fortune-songs', 'mnemo-tiny'] },
    { served: [], def: 'fortune-base', listed: [] },
  ])('lists $served with the default $def first when served', async ({ served, def, listed }) => {
    const out = await sut(
      served.map((id) => info(id)),
      def,
    ).execute();
    expect(out.data.map((m) => m.id)).toEqual(listed);
  });

  it('says each model’s context and engine', async () => {
    const out = await sut([info('fortune-base', 4096)], 'fortune-base').execute();
    expect(out.data[0]).toEqual({
      id: 'fortune-base',
      object: 'model',
      created: 0,
      owned_by: 'mnemo',
      engine: 'reference',
      max_context: 4096,
    });
  });
});
