import { Inject, Injectable } from '@nestjs/common';
import { ClusterModelCache } from './cluster-model.cache.js';

/** One entry of `GET /v1/models`: the OpenAI model object plus where Mnemo serves it. */
export interface ModelObject {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
  /** Engine that serves it on the nodes: `sim` or `reference`. */
  engine: string;
  max_context: number;
}

/** `GET /v1/models`: the models the cluster serves now, as OpenAI model objects. */
@Injectable()
export class ListAvailableModelsUseCase {
  constructor(@Inject(ClusterModelCache) private readonly models: ClusterModelCache) {}

  async execute(): Promise<{ object: 'list'; data: ModelObject[] }> {
    const models = await this.models.list();
    return {
      object: 'list',
      data: models.map((m) => ({ id: m.id, object: 'model', created: 0, owned_by: 'mnemo', engine: m.engine, max_context: m.maxContext })),
    };
  }
}
