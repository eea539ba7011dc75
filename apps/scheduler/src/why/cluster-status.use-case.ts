import { Inject, Injectable } from '@nestjs/common';
import { create } from '@bufbuild/protobuf';
import type { KvDirectory } from '@mnemo/kv-core';
import { ClusterStatusReplySchema, type ClusterStatusReply } from '@mnemo/proto';
import { SCHEDULER_CONFIG, type SchedulerConfig } from '../config/scheduler.config.js';
import { KV_DIRECTORY } from '../kv-directory/kv-report.port.js';
import { NodeRegistry } from '../nodes/node.registry.js';
import type { RoutingRecords } from './routing.records.js';
import { WHY_RECORDS } from './why.ports.js';

/**
 * `mnemo status`: the live nodes with their last reported load, the chunks each holds per tier
 * (this replica's KV directory) and, for the requests this replica routed, how much of their
 * prompts the chosen node held and where — the routed hit rate, as routing saw it.
 */
@Injectable()
export class ClusterStatusUseCase {
  constructor(
    @Inject(NodeRegistry) private readonly registry: NodeRegistry,
    @Inject(KV_DIRECTORY) private readonly directory: KvDirectory,
    @Inject(WHY_RECORDS) private readonly records: RoutingRecords,
    @Inject(SCHEDULER_CONFIG) private readonly config: SchedulerConfig,
  ) {}

  execute(): ClusterStatusReply {
    return create(ClusterStatusReplySchema, {
      policy: this.config.SCHEDULER_POLICY!,
      directoryHoldings: BigInt(this.directory.stats().holdings),
      nodes: this.registry
        .all()
        .sort((a, b) => (a.nodeId < b.nodeId ? -1 : 1))
        .map((n) => {
          const t = this.directory.tierCounts(n.nodeId);
          const r = this.records.routedTo.get(n.nodeId) ?? { prompt: 0, device: 0, host: 0, ssd: 0 };
          return {
            nodeId: n.nodeId,
            models: [...n.models],
            running: n.running,
            waiting: n.waiting,
            kvUsage: n.kvUsage,
            accepting: true, // the registry keeps only nodes that accept work
            deviceChunks: BigInt(t.device),
            hostChunks: BigInt(t.host),
            ssdChunks: BigInt(t.ssd),
            routedPromptTokens: BigInt(r.prompt),
            heldDeviceTokens: BigInt(r.device),
            heldHostTokens: BigInt(r.host),
            heldSsdTokens: BigInt(r.ssd),
            ssdBackend: n.ssdBackend ?? '',
          };
        }),
    });
  }
}
