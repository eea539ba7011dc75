import { CHUNK_TOKENS } from '../keys/chunk.constants.js';

/** A device chunk event as the tracker needs it (the block ledger's DeviceChunkEvent, without evictions). */
export type TailChunkEvent =
  | { readonly kind: 'written'; readonly seqId: string; readonly chunk: number; readonly key: string }
  | { readonly kind: 'partial'; readonly seqId: string; readonly chunk: number; readonly key: string; readonly tokens: number };

/** What a request left on its node: whole chunks of prompt and reply, then the partial chunk past them. */
export interface SessionTail {
  readonly chunkKeys: readonly string[];
  /** "" when it left no partial chunk. */
  readonly partialKey: string;
  /** 256 per whole chunk plus the partial chunk's tokens. */
  readonly tokens: number;
}

/** Sequences followed at once; past it the oldest is dropped (its tail is then reported without the reply's chunks). */
const MAX_TRACKED = 65_536;

/**
 * Follows the chunks each sequence writes on the device — whole chunks of its prompt and, as it
 * decodes, of its reply, and the partial chunk it leaves at release — so that when a session's
 * request ends, the chain its next turn will reuse is known: the prompt's chunk keys, the
 * reply's whole chunks that continue them, then the partial chunk right after. The scheduler
 * knows only the prompt's keys; with the tail an advisory can have another node prefetch the
 * reply's chunks and the partial chunk too. Bounded (MAX_TRACKED sequences).
 */
export class SessionTailTracker {
  private readonly seqs = new Map<string, { written: Map<number, string>; partial?: { key: string; chunk: number; tokens: number } }>();

  onChunk(e: TailChunkEvent): void {
    let s = this.seqs.get(e.seqId);
    if (!s) {
      if (this.seqs.size >= MAX_TRACKED) this.seqs.delete(this.seqs.keys().next().value!);
      this.seqs.set(e.seqId, (s = { written: new Map() }));
    }
    if (e.kind === 'written') s.written.set(e.chunk, e.key);
    else s.partial = { key: e.key, chunk: e.chunk, tokens: e.tokens };
  }

  /** The request `seqId` with prompt chunk keys `promptKeys` ended (after its release): its tail; the sequence is forgotten. */
  ended(seqId: string, promptKeys: readonly string[]): SessionTail {
    const s = this.seqs.get(seqId);
    this.seqs.delete(seqId);
    const keys = [...promptKeys];
    while (s?.written.has(keys.length)) keys.push(s.written.get(keys.length)!);
    const partial = s?.partial?.chunk === keys.length ? s.partial : undefined;
    return { chunkKeys: keys, partialKey: partial?.key ?? '', tokens: keys.length * CHUNK_TOKENS + (partial?.tokens ?? 0) };
  }

  /** Sequences followed now (bounded). */
  get size(): number {
    return this.seqs.size;
  }
}
