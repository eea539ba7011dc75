import { encodeMessage, NodeKvRecordSchema, NodeWhyRequestSchema, nodeWhySubject } from '@mnemo/proto';
import { decodeOrWarn, decodeRequest, natsEntryPoints } from '@mnemo/service-kit';
import { NODE_CONFIG, type NodeManagerConfig } from '../config/node-manager.config.js';
import { KV_RECORDER, type KvRecorder } from './kv.recorder.js';

/** Most chunk keys one question may ask about (a prompt of 1M tokens). */
const MAX_KEYS = 4096;

/** nodeWhy(NODE_ID) → this node's record of a request and what it knows of the chunks it did not serve. */
export const WhyNatsHandler = natsEntryPoints(
  'WhyNatsHandler',
  [KV_RECORDER, NODE_CONFIG],
  (nats, recorder: KvRecorder, config: NodeManagerConfig) => {
    nats.listen(nodeWhySubject(config.NODE_ID), (msg) => {
      const req = decodeOrWarn(nats.logger, 'why request', () => decodeRequest(NodeWhyRequestSchema, msg.data));
      if (!req) return encodeMessage(NodeKvRecordSchema, { found: false });
      const r = recorder.records.get(req.requestId);
      const drops = req.chunkKeys
        .slice(0, MAX_KEYS)
        .flatMap((key) =>
          recorder.drops.get(key).map((d) => ({ key, reason: d.reason, tier: d.tier, policy: d.policy, atUnixMs: BigInt(d.atUnixMs) })),
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
  },
);
