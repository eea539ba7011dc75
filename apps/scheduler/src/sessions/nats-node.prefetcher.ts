import { Inject, Injectable } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import {
  decodeMessage,
  encodeMessage,
  ErrorReplySchema,
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
 * PrefetchReply, or an ErrorReply (told apart by trying the error shape: a PrefetchReply never
 * has a string field 1).
 */
@Injectable()
export class NatsNodePrefetcher implements NodePrefetcher {
  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(SCHEDULER_CONFIG) private readonly config: SchedulerConfig,
  ) {}

  prefetch(nodeId: string, request: PrefetchInit): Promise<PrefetchOutcome> {
    return this.ask(Subjects.nodePrefetch(nodeId), encodeMessage(PrefetchRequestSchema, request), (data) => ({
      kind: 'queued',
      chunks: decodeMessage(PrefetchReplySchema, data).chunksQueued,
    }));
  }

  forget(nodeId: string, request: ForgetInit): Promise<PrefetchOutcome> {
    return this.ask(Subjects.nodeForget(nodeId), encodeMessage(ForgetRequestSchema, request), (data) => ({
      kind: 'queued',
      chunks: decodeMessage(ForgetReplySchema, data).freedChunks,
    }));
  }

  private async ask(subject: string, payload: Uint8Array, ok: (data: Uint8Array) => PrefetchOutcome): Promise<PrefetchOutcome> {
    if (this.nc.isClosed()) return { kind: 'unavailable' };
    const sent = await requestNats(this.nc, subject, payload, this.config.SCHEDULER_PREFETCH_TIMEOUT_MS!);
    if (sent.kind === 'timeout') return { kind: 'timeout' };
    if (sent.kind !== 'reply') return { kind: 'unavailable' };
    const data = sent.data;
    try {
      const err = decodeMessage(ErrorReplySchema, data);
      if (err.code !== '') return { kind: 'refused', code: err.code };
    } catch {
      // Not an ErrorReply: the expected reply.
    }
    try {
      return ok(data);
    } catch {
      return { kind: 'refused', code: 'malformed_reply' };
    }
  }
}
