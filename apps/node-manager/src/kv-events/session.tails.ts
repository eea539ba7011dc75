import { SessionTailTracker } from '@mnemo/kv-core';
import type { EngineChunkEvent } from '@mnemo/engine';
import type { InferenceRequest } from '@mnemo/proto';

/** What a session's request left on this node: whole chunks of prompt and reply, then the partial chunk past them. */
export interface SessionTailReport {
  readonly tenant: string;
  readonly sessionId: string;
  readonly model: string;
  readonly chunkKeys: readonly string[];
  /** "" when the request left no partial chunk. */
  readonly partialKey: string;
  /** 256 per whole chunk plus the partial chunk's tokens. */
  readonly tokens: number;
}

/** Told by the batch loop as each request ends, after the engine released it. */
export interface SessionTailsPort {
  ended(request: InferenceRequest): void;
}

export const SESSION_TAILS = Symbol('SESSION_TAILS');
export const NO_SESSION_TAILS: SessionTailsPort = { ended: () => undefined };

/**
 * Reports what a session's request left on this node as the request ends (kv-core
 * SessionTailTracker follows the engine's chunk events per sequence): the chain the session's
 * next turn will reuse, so an advisory can have another node prefetch the reply's chunks and
 * the partial chunk too, and a session that moves recomputes nothing it had.
 */
export class SessionTails implements SessionTailsPort {
  private readonly tracker = new SessionTailTracker();

  constructor(private readonly publish: (t: SessionTailReport) => void) {}

  /** Engine chunk events (`engine.watchChunks`). */
  onChunk(e: EngineChunkEvent): void {
    if (e.kind !== 'evicted') this.tracker.onChunk(e);
  }

  ended(r: InferenceRequest): void {
    const tail = this.tracker.ended(r.requestId, r.chunkKeys);
    if (!r.sessionId) return;
    this.publish({ tenant: r.tenant, sessionId: r.sessionId, model: r.model, ...tail });
  }

  /** Sequences followed now (bounded). */
  get size(): number {
    return this.tracker.size;
  }
}
