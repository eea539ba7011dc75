import { Inject, Injectable } from '@nestjs/common';
import { ModelCatalog } from './model.catalog.js';

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

@Injectable()
export class ListModelsUseCase {
  constructor(@Inject(ModelCatalog) private readonly catalog: ModelCatalog) {}

  async execute(): Promise<{ object: 'list'; data: ModelObject[] }> {
    const models = await this.catalog.list();
    return {
      object: 'list',
      data: models.map((m) => ({ id: m.id, object: 'model', created: 0, owned_by: 'mnemo', engine: m.engine, max_context: m.maxContext })),
    };
  }
}
