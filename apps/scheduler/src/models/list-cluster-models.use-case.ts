import { Inject, Injectable } from '@nestjs/common';
import { NodeRegistry, type AdvertisedModel } from '../nodes/node.registry.js';

/** Models some live node serves, one entry per id (the first node's description), sorted by id. */
@Injectable()
export class ListClusterModelsUseCase {
  constructor(@Inject(NodeRegistry) private readonly registry: NodeRegistry) {}

  execute(): AdvertisedModel[] {
    const byId = new Map<string, AdvertisedModel>();
    for (const node of this.registry.all()) for (const m of node.modelInfos) if (!byId.has(m.id)) byId.set(m.id, m);
    return [...byId.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }
}
