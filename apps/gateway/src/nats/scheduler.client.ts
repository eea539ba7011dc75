import { ROOT_CONTEXT, type Context } from '@opentelemetry/api';
import { natsTraceHeaders } from '@mnemo/service-kit';
import { Inject, Injectable } from '@nestjs/common';
import { createInbox, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { ErrorCode, isMnemoError, MnemoError } from '@mnemo/kv-core';
import {
  ClusterStatusReplySchema,
  ClusterStatusRequestSchema,
  type ClusterStatusReply,
  WhyReplySchema,
  WhyRequestSchema,
  type KvExplanation,
  AdvisoryReplySchema,
  AdvisoryRequestSchema,
  InvalidateAdvisoryReplySchema,
  InvalidateAdvisoryRequestSchema,
  SessionDeleteReplySchema,
  SessionReplySchema,
  SessionRequestSchema,
  type AdvisoryInfo,
  type AdvisoryRequest,
  type SessionDeleted,
  type SessionInfo,
  InferenceRequestSchema,
  ListModelsReplySchema,
  ListModelsRequestSchema,
  ScheduleReplySchema,
  Subjects,
  TokenEventSchema,
  decodeMessage,
  encodeMessage,
  type ErrorReply,
  type ModelInfo,
  type TokenEvent,
} from '@mnemo/proto';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { NATS_CONNECTION, natsInboxPrefix } from '@mnemo/service-kit';
import { fromReply, natsRequest } from './nats.request.js';

export type InferenceRequestInit = MessageInitShape<typeof InferenceRequestSchema>;

/** Receives a request's TokenEvents; opened (subscribed) before the request is scheduled. */
export interface TokenInbox {
  readonly subject: string;
  close(): void;
}

/**
 * Where the scheduler placed a request: the admitting node, the dispatch attempt it admitted, and the node's incarnation ("" or absent:
 * unknown).
 */
export interface Placement {
  readonly nodeId: string;
  readonly attempt: number;
  readonly bootId?: string;
}

/**
 * The gateway's side of the scheduler's NATS contract (libs/proto/src/subjects.ts): models
 * list, token inbox, schedule. Transport failures become domain errors.
 */
@Injectable()
export class SchedulerClient {
  constructor(@Inject(NATS_CONNECTION) private readonly nc: NatsConnection) {}

  async listModels(timeoutMs: number): Promise<ModelInfo[]> {
    const msg = await natsRequest(this.nc, Subjects.MODELS_LIST, encodeMessage(ListModelsRequestSchema, {}), timeoutMs, 'scheduler');
    const reply = decodeMessage(ListModelsReplySchema, msg);
    if (reply.error && reply.error.code !== '') throw fromReply(reply.error);
    return reply.models;
  }

  /**
   * Subscribes to a fresh inbox. Must happen before `schedule`: the node may publish
   * its first token before the scheduler's reply reaches us.
   */
  openInbox(onEvent: (e: TokenEvent) => void, onBadPayload: (err: unknown) => void): TokenInbox {
    const subject = createInbox(natsInboxPrefix('gateway'));
    const sub: Subscription = this.nc.subscribe(subject, {
      callback: (err, msg) => {
        if (err) return onBadPayload(err);
        try {
          onEvent(decodeMessage(TokenEventSchema, msg.data));
        } catch (e) {
          onBadPayload(e);
        }
      },
    });
    return { subject, close: () => sub.unsubscribe() };
  }

  async advise(request: Omit<AdvisoryRequest, '$typeName' | '$unknown'>, timeoutMs: number): Promise<AdvisoryInfo> {
    const reply = decodeMessage(
      AdvisoryReplySchema,
      await natsRequest(this.nc, Subjects.ADVISE, encodeMessage(AdvisoryRequestSchema, request), timeoutMs, 'scheduler'),
    );
    return unwrap(reply.result, 'advisory');
  }

  async invalidate(tenant: string, advisoryId: string, timeoutMs: number): Promise<boolean> {
    const payload = encodeMessage(InvalidateAdvisoryRequestSchema, { tenant, advisoryId });
    const reply = decodeMessage(
      InvalidateAdvisoryReplySchema,
      await natsRequest(this.nc, Subjects.INVALIDATE, payload, timeoutMs, 'scheduler'),
    );
    return unwrap(reply.result, 'found');
  }

  async getSession(tenant: string, sessionId: string, timeoutMs: number): Promise<SessionInfo> {
    const payload = encodeMessage(SessionRequestSchema, { tenant, sessionId });
    const reply = decodeMessage(SessionReplySchema, await natsRequest(this.nc, Subjects.SESSION_GET, payload, timeoutMs, 'scheduler'));
    return unwrap(reply.result, 'session');
  }

  async deleteSession(tenant: string, sessionId: string, timeoutMs: number): Promise<SessionDeleted> {
    const payload = encodeMessage(SessionRequestSchema, { tenant, sessionId });
    const reply = decodeMessage(
      SessionDeleteReplySchema,
      await natsRequest(this.nc, Subjects.SESSION_DELETE, payload, timeoutMs, 'scheduler'),
    );
    return unwrap(reply.result, 'deleted');
  }

  /** Nodes, load, KV per tier and routed hit rates (`mnemo status`). */
  async status(timeoutMs: number): Promise<ClusterStatusReply> {
    return decodeMessage(
      ClusterStatusReplySchema,
      await natsRequest(this.nc, Subjects.STATUS, encodeMessage(ClusterStatusRequestSchema, {}), timeoutMs, 'scheduler'),
    );
  }

  /** A request's KV explanation from the scheduler replica that routed it; null when none answers in time (unknown). */
  async why(q: { requestId: string; tenant: string; admin: boolean }, timeoutMs: number): Promise<KvExplanation | null> {
    let data: Uint8Array;
    try {
      data = await natsRequest(this.nc, Subjects.WHY, encodeMessage(WhyRequestSchema, q), timeoutMs, 'scheduler');
    } catch (e) {
      if (isMnemoError(e) && e.code === ErrorCode.Timeout) return null;
      throw e;
    }
    const reply = decodeMessage(WhyReplySchema, data);
    if (reply.result.case === 'explanation') return reply.result.value;
    if (reply.result.case === 'error' && reply.result.value.code === 'not_found') return null;
    return unwrap(
      reply.result as
        { case: 'explanation'; value: KvExplanation } | { case: 'error'; value: ErrorReply } | { case: undefined; value?: undefined },
      'explanation',
    );
  }

  async schedule(request: InferenceRequestInit, timeoutMs: number, trace: Context = ROOT_CONTEXT): Promise<Placement> {
    const msg = await natsRequest(
      this.nc,
      Subjects.SCHEDULE,
      encodeMessage(InferenceRequestSchema, request),
      timeoutMs,
      'scheduler',
      natsTraceHeaders(trace),
    );
    const reply = decodeMessage(ScheduleReplySchema, msg);
    switch (reply.result.case) {
      case 'nodeId':
        return { nodeId: reply.result.value, attempt: reply.attempt, bootId: reply.bootId };
      case 'error':
        throw fromReply(reply.result.value);
      default:
        throw new MnemoError(ErrorCode.Internal, 'scheduler sent an empty schedule reply');
    }
  }
}

/** The value of a `oneof result { X ok; ErrorReply error }` reply, or its error thrown as a domain error. */
function unwrap<K extends string, T>(
  result: { case: K; value: T } | { case: 'error'; value: ErrorReply } | { case: undefined; value?: undefined },
  ok: K,
): T {
  if (result.case === ok) return result.value as T;
  if (result.case === 'error') throw fromReply(result.value as ErrorReply);
  throw new MnemoError(ErrorCode.Internal, `scheduler sent an empty ${ok} reply`);
}
