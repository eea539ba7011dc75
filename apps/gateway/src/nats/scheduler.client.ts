import { Inject, Injectable } from '@nestjs/common';
import { createInbox, RequestError, TimeoutError, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { ErrorCode, MnemoError, isMnemoError } from '@mnemo/kv-core';
import {
  CancelRequestSchema,
  InferenceRequestSchema,
  ListModelsReplySchema,
  ListModelsRequestSchema,
  ScheduleReplySchema,
  Subjects,
  TokenEventSchema,
  decodeMessage,
  encodeMessage,
  nodeCancelSubject,
  type ErrorReply,
  type ModelInfo,
  type TokenEvent,
} from '@mnemo/proto';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { NATS_CONNECTION } from '@mnemo/service-kit';

export type InferenceRequestInit = MessageInitShape<typeof InferenceRequestSchema>;

/** Receives a request's TokenEvents; opened (subscribed) before the request is scheduled. */
export interface TokenInbox {
  readonly subject: string;
  close(): void;
}

/**
 * The gateway's side of the scheduler/node NATS contract (libs/proto/src/subjects.ts):
 * models list, schedule, token inbox, cancel. Transport failures become domain errors
 * so callers map them like any other.
 */
@Injectable()
export class SchedulerClient {
  constructor(@Inject(NATS_CONNECTION) private readonly nc: NatsConnection) {}

  async listModels(timeoutMs: number): Promise<ModelInfo[]> {
    const msg = await this.request(Subjects.MODELS_LIST, encodeMessage(ListModelsRequestSchema, {}), timeoutMs);
    const reply = decodeMessage(ListModelsReplySchema, msg);
    if (reply.error && reply.error.code !== '') throw fromReply(reply.error);
    return reply.models;
  }

  /**
   * Subscribes to a fresh inbox. Must happen before `schedule`: the node may publish
   * its first token before the scheduler's reply reaches us.
   */
  openInbox(onEvent: (e: TokenEvent) => void, onBadPayload: (err: unknown) => void): TokenInbox {
    const subject = createInbox();
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

  /** Returns the id of the node that admitted the request. */
  async schedule(request: InferenceRequestInit, timeoutMs: number): Promise<string> {
    const msg = await this.request(Subjects.SCHEDULE, encodeMessage(InferenceRequestSchema, request), timeoutMs);
    const reply = decodeMessage(ScheduleReplySchema, msg);
    switch (reply.result.case) {
      case 'nodeId':
        return reply.result.value;
      case 'error':
        throw fromReply(reply.result.value);
      default:
        throw new MnemoError(ErrorCode.Internal, 'scheduler sent an empty schedule reply');
    }
  }

  /** Fire-and-forget: the node frees the request's resources; a lost cancel is caught by the request deadline. */
  cancel(nodeId: string, requestId: string, reason: string): void {
    if (this.nc.isClosed()) return;
    this.nc.publish(nodeCancelSubject(nodeId), encodeMessage(CancelRequestSchema, { requestId, reason }));
  }

  private async request(subject: string, payload: Uint8Array, timeoutMs: number): Promise<Uint8Array> {
    try {
      return (await this.nc.request(subject, payload, { timeout: timeoutMs })).data;
    } catch (e) {
      if (isMnemoError(e)) throw e;
      if (e instanceof RequestError && e.isNoResponders()) {
        throw new MnemoError(ErrorCode.NoNodeAvailable, 'no scheduler is running');
      }
      if (e instanceof TimeoutError || (e instanceof RequestError && e.cause instanceof TimeoutError)) {
        throw new MnemoError(ErrorCode.Timeout, `the scheduler did not answer within ${timeoutMs} ms`);
      }
      throw e;
    }
  }
}

const CODES: ReadonlySet<string> = new Set(Object.values(ErrorCode));

/** An ErrorReply from another service, as a domain error (unknown codes become internal). */
export function fromReply(e: ErrorReply): MnemoError {
  const code = CODES.has(e.code) ? (e.code as ErrorCode) : ErrorCode.Internal;
  return new MnemoError(code, e.message || e.code);
}

