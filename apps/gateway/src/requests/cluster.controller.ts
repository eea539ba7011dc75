import { Controller, Get, Inject, UseGuards } from '@nestjs/common';
import { ApiKeyGuard } from '../auth/api-key.guard.js';
import { SchedulerClient } from '../nats/scheduler.client.js';

/** `GET /v1/cluster`: the live nodes, their load, the chunks each holds per tier and the routed hit rates (`mnemo status`). */
@Controller('v1/cluster')
@UseGuards(ApiKeyGuard)
export class ClusterController {
  constructor(@Inject(SchedulerClient) private readonly scheduler: SchedulerClient) {}

  @Get()
  async status(): Promise<object> {
    const s = await this.scheduler.status(5000);
    const rate = (held: bigint, of: bigint) => (of === 0n ? null : Number(held) / Number(of));
    return {
      policy: s.policy,
      directory_holdings: Number(s.directoryHoldings),
      nodes: s.nodes.map((n) => ({
        node_id: n.nodeId,
        models: n.models,
        running: n.running,
        waiting: n.waiting,
        kv_usage: n.kvUsage,
        chunks: { device: Number(n.deviceChunks), host: Number(n.hostChunks), ssd: Number(n.ssdChunks) },
        // "io_uring", "pread" (the fallback, one request at a time), or null: no SSD pool (or a node too old to say).
        ssd_backend: n.ssdBackend || null,
        routed_prompt_tokens: Number(n.routedPromptTokens),
        // Of the prompt tokens routed here, the share the node held in each tier when routed (by the replica that answered).
        routed_hit_rate: {
          device: rate(n.heldDeviceTokens, n.routedPromptTokens),
          host: rate(n.heldHostTokens, n.routedPromptTokens),
          ssd: rate(n.heldSsdTokens, n.routedPromptTokens),
        },
      })),
    };
  }
}
