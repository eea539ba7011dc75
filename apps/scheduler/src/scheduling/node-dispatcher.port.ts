import type { InferenceRequest } from '@mnemo/proto';

/** What happened when a request was handed to a node. */
export type DispatchOutcome =
  | { readonly kind: 'admitted' }
  /** The node answered with an error (overloaded, prompt_too_long, …). */
  | { readonly kind: 'refused'; readonly code: string; readonly message: string }
  /** No answer: nobody subscribed (node gone) or it timed out. */
  | { readonly kind: 'unreachable'; readonly reason: string };

/** Hands an inference to one node; the NATS adapter is the production implementation. */
export interface NodeDispatcher {
  dispatch(nodeId: string, request: InferenceRequest): Promise<DispatchOutcome>;
  /** Best effort: tells a node to drop a request it may have admitted after we stopped waiting. */
  cancel(nodeId: string, requestId: string, reason: string): void;
}

export const NODE_DISPATCHER = Symbol('NODE_DISPATCHER');
