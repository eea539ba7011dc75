import { Inject, Injectable } from '@nestjs/common';
import type { DescMessage, MessageShape } from '@bufbuild/protobuf';
import type { NatsConnection } from '@nats-io/transport-node';
import {
  decodeReplyOrError,
  encodeMessage,
  ForgetReplySchema,
  ForgetRequestSchema,
  PrefetchReplySchema,
  PrefetchRequestSchema,
  Subjects,
} from '@mnemo/proto';
import { NATS_CONNECTION, requestNats } from '@mnemo/service-kit';
import { SCHEDULER_CONFIG, type SchedulerConfig } from '../config/scheduler.config.js';
import type { ForgetInit, NodePrefetcher, PrefetchInit, PrefetchOutcome } from './node-prefetch.port.js';

/**
 * NATS requests on Subjects.nodePrefetch / nodeForget. A node without a handler answers
 * no-responders: "prefetch unavailable", which never fails the advisory. A reply is a
 * PrefetchReply (ForgetReply), or an ErrorReply: `decodeReplyOrError` tells them apart.
 */
@Injectable()
export class NatsNodePrefetcher implements NodePrefetcher {
  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(SCHEDULER_CONFIG) private readonly config: SchedulerConfig,
  ) {}

  prefetch(nodeId: string, request: PrefetchInit): Promise<PrefetchOutcome> {
    const payload = encodeMessage(PrefetchRequestSchema, request);
    return this.ask(Subjects.nodePrefetch(nodeId), payload, PrefetchReplySchema, (r) => r.chunksQueued);
  }

  forget(nodeId: string, request: ForgetInit): Promise<PrefetchOutcome> {
    return this.ask(Subjects.nodeForget(nodeId), encodeMessage(ForgetRequestSchema, request), ForgetReplySchema, (r) => r.freedChunks);
  }

  /** `chunks`: what the node's reply counts (queued for a prefetch, freed for a forget). */
  private async ask<D extends DescMessage>(
    subject: string,
    payload: Uint8Array,
    reply: D,
    chunks: (r: MessageShape<D>) => number,
  ): Promise<PrefetchOutcome> {
    if (this.nc.isClosed()) return { kind: 'unavailable' };
    const sent = await requestNats(this.nc, subject, payload, this.config.SCHEDULER_PREFETCH_TIMEOUT_MS!);
    if (sent.kind === 'timeout') return { kind: 'timeout' };
    if (sent.kind !== 'reply') return { kind: 'unavailable' };
    try {
      const r = decodeReplyOrError(reply, sent.data);
      return 'error' in r ? { kind: 'refused', code: r.error.code } : { kind: 'queued', chunks: chunks(r.ok) };
    } catch {
      return { kind: 'refused', code: 'malformed_reply' };
    }
  }
}
