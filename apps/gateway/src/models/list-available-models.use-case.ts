import { Inject, Injectable } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config/gateway.config.js';
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

/**
 * `GET /v1/models`: the models the cluster serves now, as OpenAI model objects. The
 * configured default model (MNEMO_DEFAULT_MODEL) comes first when served, so a client that
 * takes the first entry talks to the trained model rather than a test model.
 */
@Injectable()
export class ListAvailableModelsUseCase {
  constructor(
    @Inject(ClusterModelCache) private readonly models: ClusterModelCache,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  async execute(): Promise<{ object: 'list'; data: ModelObject[] }> {
    const models = await this.models.list();
    const first = this.config.defaultModel;
    const ordered = [...models.filter((m) => m.id === first), ...models.filter((m) => m.id !== first)];
    return {
      object: 'list',
      data: ordered.map((m) => ({ id: m.id, object: 'model', created: 0, owned_by: 'mnemo', engine: m.engine, max_context: m.maxContext })),
    };
  }
}
