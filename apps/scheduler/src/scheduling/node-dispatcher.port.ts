import type { Context } from '@opentelemetry/api';
import type { InferenceRequest } from '@mnemo/proto';

/** What happened when a request was handed to a node. */
export type DispatchOutcome =
  /** `bootId`: the admitting node's incarnation, as its reply names it ("" from a node that sends none). */
  | { readonly kind: 'admitted'; readonly bootId: string }
  /** The node answered with an error (overloaded, prompt_too_long, …). */
  | { readonly kind: 'refused'; readonly code: string; readonly message: string }
  /** No answer: nobody subscribed (node gone) or it timed out. */
  | { readonly kind: 'unreachable'; readonly reason: string }
  /** Not the node's fault: the request could not be sent or its answer read (NATS down or reconnecting, a reply that does not decode). */
  | { readonly kind: 'failed'; readonly reason: string };

/** Hands an inference to one node; the NATS adapter is the production implementation. */
export interface NodeDispatcher {
  /** `request.attempt` names this dispatch; the node stamps it on every TokenEvent. */
  /** `trace`: the dispatch span, carried to the node in the message headers. */
  dispatch(nodeId: string, request: InferenceRequest, trace?: Context): Promise<DispatchOutcome>;
  /**
   * Best effort, after a dispatch timeout: the node drops that attempt if it admitted it late (or
   * refuses it if it comes later), and sends nothing to the inbox, which the next attempt uses.
   */
  abandon(nodeId: string, requestId: string, attempt: number): void;
}

export const NODE_DISPATCHER = Symbol('NODE_DISPATCHER');
