import type { BlockKeyChain, KvSourcePlan, NodeSeq } from '@mnemo/kv-core';
import type { PromptKeys } from './prompt-keys.js';
import { SimTokenStream } from '@mnemo/engine';

/** A node holding chunks of a request's prompt, as the scheduler names it (InferenceRequest.kv_sources): the router's plan as is. */
export type TwinKvSource = KvSourcePlan;

/** One request as the twin's client sends it and its node runs it. */
export interface TwinRequest {
  readonly id: string;
  readonly tenant: string;
  readonly sessionId: string;
  readonly model: string;
  readonly tokens: readonly number[];
  readonly chunkKeys: readonly string[];
  readonly maxTokens: number;
  readonly priority: number;
  /** Set by the scheduler: peers holding chunks of the prompt. */
  kvSources: readonly TwinKvSource[];
  /** The prompt's block keys, shared by the scheduler and the node (hashed once). */
  readonly keys?: PromptKeys;
}

/**
 * A request inside a twin node, from admission to its last token: the iteration policy's view
 * of it (kv-core NodeSeq) plus what the modelled engine keeps — the token ids whose KV is on the
 * device and the reply's token source (the sim engine's, so replies are the live ones).
 */
export class TwinSeq implements NodeSeq {
  phase: 'waiting' | 'running' | 'swapping' = 'waiting';
  readonly paused = false;
  readonly streamed = false;
  preempted = false;
  swapped = false;
  preemptions = 0;
  /** Prompt tokens whose KV was not computed (device, tiers or peers). */
  cachedTokens = 0;
  /** Of them, restored from a tier or a peer. */
  restoredTokens = 0;
  generated = 0;
  /** The reply so far: every sampled token (a stop token is never sampled: the benchmark's EOS chance is 0). */
  readonly reply: number[] = [];
  /** Tokens whose KV the device holds for it: the prompt, then the reply but its last sampled token. */
  kvLength = 0;
  /** Last sampled token, not in the KV yet: the next decode's input. */
  pending = 0;
  /** Open in the device's ledger. */
  open = false;
  firstTokenAt?: number;
  /** The prompt's block keys as far as planning needed them (the device's prefix lookups), when the request brings none. */
  promptKeys?: BlockKeyChain;
  /** The ledger append of its decode steps, reused step after step (the device sets its token). */
  decodeItem?: { readonly seqId: string; readonly tokens: number; readonly ids: number[] };
  /** Block keys of the prompt's chunks, hashed once (see restore planning), when the request brings none. */
  readonly blockKeys = new Map<number, readonly string[]>();
  private readonly stream: SimTokenStream;

  constructor(
    readonly request: TwinRequest,
    readonly arrivalSeq: number,
    readonly arrivedAt: number,
    eosTokenId: number,
  ) {
    // The benchmark's requests are greedy with seed 1: the sim engine's stream for (seed, prompt).
    this.stream = new SimTokenStream(1, request.tokens, 0, eosTokenId, 0);
  }

  get id(): string {
    return this.request.id;
  }

  get pool(): string {
    return this.request.model;
  }

  get priority(): number {
    return this.request.priority;
  }

  get promptTokens(): number {
    return this.request.tokens.length;
  }

  /** The token ids whose KV the device holds, in order (what a resume recomputes; built on demand). */
  kvTokenIds(): number[] {
    const prompt = this.request.tokens;
    if (this.kvLength <= prompt.length) return prompt.slice(0, this.kvLength);
    return [...prompt, ...this.reply.slice(0, this.kvLength - prompt.length)];
  }

  /** Samples the next token (the input of the next decode). */
  sample(): number {
    this.pending = this.stream.next();
    this.reply.push(this.pending);
    return this.pending;
  }
}
