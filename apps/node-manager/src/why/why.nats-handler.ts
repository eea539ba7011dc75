import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { encodeMessage, NodeKvRecordSchema, NodeWhyRequestSchema, nodeWhySubject } from '@mnemo/proto';
import { decodeRequest, JsonLogger, NatsEndpoints } from '@mnemo/service-kit';
import { NODE_CONFIG, type NodeManagerConfig } from '../config/node-manager.config.js';
import { KV_RECORDER, type KvRecorder } from './kv.recorder.js';

/** Most chunk keys one question may ask about (a prompt of 1M tokens). */
const MAX_KEYS = 4096;

/** nodeWhy(NODE_ID) → this node's record of a request and what it knows of the chunks it did not serve. */
@Injectable()
export class WhyNatsHandler implements OnApplicationBootstrap {
  constructor(
    @Inject(NatsEndpoints) private readonly endpoints: NatsEndpoints,
    @Inject(KV_RECORDER) private readonly recorder: KvRecorder,
    @Inject(NODE_CONFIG) private readonly config: NodeManagerConfig,
    @Inject(JsonLogger) private readonly logger: JsonLogger,
  ) {}

  onApplicationBootstrap(): void {
    this.endpoints.listen(nodeWhySubject(this.config.NODE_ID), (msg) => {
      let req;
      try {
        req = decodeRequest(NodeWhyRequestSchema, msg.data);
      } catch (e) {
        this.logger.emit('warn', 'malformed why request ignored', { err: String(e) });
        return encodeMessage(NodeKvRecordSchema, { found: false });
      }
      const r = this.recorder.records.get(req.requestId);
      const drops = req.chunkKeys
        .slice(0, MAX_KEYS)
        .flatMap((key) =>
          this.recorder.drops
            .get(key)
            .map((d) => ({ key, reason: d.reason, tier: d.tier, policy: d.policy, atUnixMs: BigInt(d.atUnixMs) })),
        );
      if (!r) return encodeMessage(NodeKvRecordSchema, { found: false, drops });
      return encodeMessage(NodeKvRecordSchema, {
        found: true,
        promptTokens: r.promptTokens,
        deviceTokens: r.deviceTokens,
        hostTokens: r.restored.host,
        ssdTokens: r.restored.ssd,
        peerTokens: r.restored.peer,
        peerAddress: r.restored.peerAddress ?? '',
        restoreOk: r.restoreOk,
        droidspeakTokens: r.droidspeak?.tokens ?? 0,
        droidspeakBase: r.droidspeak?.base ?? '',
        cachedTokens: r.cachedTokens,
        drops,
        admittedUnixMs: BigInt(r.admittedUnixMs),
        firstTokenUnixMs: BigInt(r.firstTokenUnixMs),
      });
    });
  }
}
