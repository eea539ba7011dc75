import { CHUNK_TOKENS } from '@mnemo/kv-core';
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

/** Sequences followed at once; past it the oldest is dropped (its tail is then reported without the reply's chunks). */
const MAX_TRACKED = 65_536;

/**
 * Follows the engine's chunk events per sequence — whole chunks a sequence wrote (its prompt's
 * and, as it decodes, its reply's) and the partial chunk it leaves at release — and, when a
 * request of a session ends, reports the chain the session's next turn will reuse. The
 * scheduler knows only the prompt's keys; this lets an advisory have another node prefetch the
 * reply's chunks and the partial chunk too, so a session that moves recomputes nothing it had.
 */
export class SessionTails implements SessionTailsPort {
  private readonly seqs = new Map<string, { written: Map<number, string>; partial?: { key: string; chunk: number; tokens: number } }>();

  constructor(private readonly publish: (t: SessionTailReport) => void) {}

  /** Engine chunk events (`engine.watchChunks`). */
  onChunk(e: EngineChunkEvent): void {
    if (e.kind === 'evicted') return;
    let s = this.seqs.get(e.seqId);
    if (!s) {
      if (this.seqs.size >= MAX_TRACKED) this.seqs.delete(this.seqs.keys().next().value!);
      this.seqs.set(e.seqId, (s = { written: new Map() }));
    }
    if (e.kind === 'written') s.written.set(e.chunk, e.key);
    else s.partial = { key: e.key, chunk: e.chunk, tokens: e.tokens };
  }

  ended(r: InferenceRequest): void {
    const s = this.seqs.get(r.requestId);
    this.seqs.delete(r.requestId);
    if (!r.sessionId) return;
    const keys = [...r.chunkKeys];
    while (s?.written.has(keys.length)) keys.push(s.written.get(keys.length)!);
    const partial = s?.partial?.chunk === keys.length ? s.partial : undefined;
    this.publish({ tenant: r.tenant, sessionId: r.sessionId, model: r.model, chunkKeys: keys, partialKey: partial?.key ?? '', tokens: keys.length * CHUNK_TOKENS + (partial?.tokens ?? 0) });
  }

  /** Sequences followed now (bounded). */
  get size(): number {
    return this.seqs.size;
  }
}
