import { ROOT_CONTEXT, type Context } from '@opentelemetry/api';
import { natsTraceHeaders } from '@mnemo/service-kit';
import { Inject, Injectable } from '@nestjs/common';
import { createInbox, type MsgHdrs, type NatsConnection, type Subscription } from '@nats-io/transport-node';
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
import type { DescMessage, MessageInitShape, MessageShape } from '@bufbuild/protobuf';
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
    const reply = await this.ask(Subjects.MODELS_LIST, ListModelsRequestSchema, {}, ListModelsReplySchema, timeoutMs);
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
    const reply = await this.ask(Subjects.ADVISE, AdvisoryRequestSchema, request, AdvisoryReplySchema, timeoutMs);
    return unwrap(reply.result, 'advisory');
  }

  async invalidate(tenant: string, advisoryId: string, timeoutMs: number): Promise<boolean> {
    const request = { tenant, advisoryId };
    const reply = await this.ask(Subjects.INVALIDATE, InvalidateAdvisoryRequestSchema, request, InvalidateAdvisoryReplySchema, timeoutMs);
    return unwrap(reply.result, 'found');
  }

  async getSession(tenant: string, sessionId: string, timeoutMs: number): Promise<SessionInfo> {
    const reply = await this.ask(Subjects.SESSION_GET, SessionRequestSchema, { tenant, sessionId }, SessionReplySchema, timeoutMs);
    return unwrap(reply.result, 'session');
  }

  async deleteSession(tenant: string, sessionId: string, timeoutMs: number): Promise<SessionDeleted> {
    const reply = await this.ask(Subjects.SESSION_DELETE, SessionRequestSchema, { tenant, sessionId }, SessionDeleteReplySchema, timeoutMs);
    return unwrap(reply.result, 'deleted');
  }

  /** Nodes, load, KV per tier and routed hit rates (`mnemo status`). */
  async status(timeoutMs: number): Promise<ClusterStatusReply> {
    return this.ask(Subjects.STATUS, ClusterStatusRequestSchema, {}, ClusterStatusReplySchema, timeoutMs);
  }

  /** A request's KV explanation from the scheduler replica that routed it; null when none answers in time (unknown). */
  async why(q: { requestId: string; tenant: string; admin: boolean }, timeoutMs: number): Promise<KvExplanation | null> {
    let reply;
    try {
      reply = await this.ask(Subjects.WHY, WhyRequestSchema, q, WhyReplySchema, timeoutMs);
    } catch (e) {
      if (isMnemoError(e) && e.code === ErrorCode.Timeout) return null;
      throw e;
    }
    if (reply.result.case === 'explanation') return reply.result.value;
    if (reply.result.case === 'error' && reply.result.value.code === 'not_found') return null;
    return unwrap(
      reply.result as
        { case: 'explanation'; value: KvExplanation } | { case: 'error'; value: ErrorReply } | { case: undefined; value?: undefined },
      'explanation',
    );
  }

  async schedule(request: InferenceRequestInit, timeoutMs: number, trace: Context = ROOT_CONTEXT): Promise<Placement> {
    const reply = await this.ask(
      Subjects.SCHEDULE,
      InferenceRequestSchema,
      request,
      ScheduleReplySchema,
      timeoutMs,
      natsTraceHeaders(trace),
    );
    switch (reply.result.case) {
      case 'nodeId':
        return { nodeId: reply.result.value, attempt: reply.attempt, bootId: reply.bootId };
      case 'error':
        throw fromReply(reply.result.value);
      default:
        throw new MnemoError(ErrorCode.Internal, 'scheduler sent an empty schedule reply');
    }
  }

  /** One request/reply with the scheduler: `request` encoded as `req`, the answer decoded as `res`. */
  private async ask<Q extends DescMessage, R extends DescMessage>(
    subject: string,
    req: Q,
    request: MessageInitShape<Q>,
    res: R,
    timeoutMs: number,
    headers?: MsgHdrs,
  ): Promise<MessageShape<R>> {
    return decodeMessage(res, await natsRequest(this.nc, subject, encodeMessage(req, request), timeoutMs, 'scheduler', headers));
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
