import type { Context, Span } from '@opentelemetry/api';
import type { ServedModel } from '@mnemo/engine';
import type { InferenceRequest } from '@mnemo/proto';
import type { KvReuseReport } from './kv-reuse.report.js';

/** One request inside the node, from admission to its last TokenEvent. */
export class Sequence {
  /** `swapping`: an asynchronous swap-in is copying its KV back; it is planned again once that settles. */
  phase: 'waiting' | 'running' | 'swapping' = 'waiting';
  /** Waiting after its device KV was dropped to make room: admission resumes it instead of prefilling. */
  preempted = false;
  /** Times it was preempted. */
  preemptions = 0;
  /**
   * Prompt tokens whose KV was not computed (OpenAI's cached_tokens): the device prefix cache, or
   * restored from the host or SSD pool or a peer. A cross-model (DroidSpeak) prefix recomputes
   * some layers of every position it reuses, so it counts none (usage.kv_reuse reports it).
   */
  cachedTokens = 0;
  /** Where its prefill's restore read from, tokens (set when the pass asks for the restore; the node's cost meter reads it). */
  restored?: { readonly host: number; readonly ssd: number; readonly peer: number };
  /** Set when its prefill reused a base model's KV (DroidSpeak): reported in usage. */
  kvReuse?: KvReuseReport;
  /** Completion tokens sampled so far (a final EOS/stop token included). */
  generated = 0;
  /** seq of the next TokenEvent. */
  nextEventSeq = 0;
  firstTokenMs?: number;
  lastTokenMs?: number;
  /**
   * Left out of iterations (the gateway's client reads slowly); its KV stays allocated.
   * Set only through `SequenceStore.setPaused`, which wakes the loop on resume.
   */
  paused = false;
  /**
   * Its context does not fit the model's device cache: it runs through the engine's layer stream
   * cache, alone, with every block taken at its start; it is never preempted.
   */
  streamed = false;
  /** Block keys of the prompt's chunks, by chunk index, hashed on first use (see StoredPrompt.blockKeys). */
  readonly blockKeys = new Map<number, readonly string[]>();
  /** Trace context of its admission (the scheduler's dispatch span's child); spans of its prefill hang under it. */
  trace?: Context;
  /** Open from the start of its prefill to its first token. */
  prefillSpan?: Span;
  /** Ends without a final TokenEvent: nobody waits for this attempt (CancelRequest.silent). */
  silent = false;
  readonly stopTokenIds: ReadonlySet<number>;
  /** Completion tokens allowed: max_tokens, capped by what the context has room for. */
  readonly maxTokens: number;

  constructor(
    readonly request: InferenceRequest,
    readonly model: ServedModel,
    readonly arrivalSeq: number,
    readonly arrivedMs: number,
  ) {
    const stops = request.sampling?.stopTokenIds ?? [];
    this.stopTokenIds = new Set(request.sampling?.ignoreEos ? stops : [model.eosTokenId, ...stops]);
    const room = model.maxContext - request.tokens.length;
    const asked = request.sampling?.maxTokens ?? 0;
    // 0 = not set: generate until EOS or the context is full.
    this.maxTokens = asked > 0 ? Math.min(asked, room) : room;
  }

  get id(): string {
    return this.request.requestId;
  }
}
