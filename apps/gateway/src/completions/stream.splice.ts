import { create } from '@bufbuild/protobuf';
import { continuedUsage } from '@mnemo/kv-core';
import { FinishReason, TokenEventSchema, UsageSchema, type TokenEvent } from '@mnemo/proto';

/**
 * Joins the attempts of one request into the one stream its client sees. Each attempt numbers
 * its events from 0 and reports usage for its own prompt, which after a failover is the original
 * prompt plus what was streamed before; the client must instead see one seq sequence and usage of
 * its own prompt and every completion token (kv-core `continuedUsage`). It also keeps the tokens
 * streamed so far: the next continuation's prompt and draw offset (kv-core `planContinuation`).
 */
export class StreamSplice {
  private readonly tokens: number[] = [];
  private nextSeq = 0;
  private seqBase = 0;
  /** The next seq expected of the placed attempt, in its own numbering (each attempt counts from 0). */
  private attemptNext = 0;
  private streamedBefore = 0;
  private firstCached?: number;
  /** Continuations started. */
  failovers = 0;

  constructor(private readonly promptTokens: number) {}

  /** Completion tokens handed on so far, over every attempt. */
  get streamed(): readonly number[] {
    return this.tokens;
  }

  /**
   * Where an event of the placed attempt falls: the next one, a repeat (already handed on), or
   * past a gap — events lost in transit (core NATS is at most once: what a node published while
   * the bus restarted can be gone). Only `next` may be mapped: the streamed tokens must stay the
   * exact prefix a continuation resumes from.
   */
  order(ev: TokenEvent): 'next' | 'repeat' | 'gap' {
    return ev.seq === this.attemptNext ? 'next' : ev.seq < this.attemptNext ? 'repeat' : 'gap';
  }

  /** One event of the placed attempt, as the client's stream carries it. */
  map(ev: TokenEvent): TokenEvent {
    this.attemptNext = ev.seq + 1;
    const seq = this.seqBase + ev.seq;
    this.nextSeq = Math.max(this.nextSeq, seq + 1);
    this.tokens.push(...ev.tokens);
    if (this.failovers === 0) {
      if (ev.usage) this.firstCached ??= ev.usage.cachedTokens;
      return ev;
    }
    if (!ev.usage) return { ...ev, seq };
    return { ...ev, seq, usage: { ...ev.usage, ...continuedUsage(this.promptTokens, this.streamedBefore, ev.usage, this.firstCached) } };
  }

  /** A new attempt continues the stream: its seq 0 follows the last event handed on. */
  continued(): void {
    this.failovers++;
    this.attemptNext = 0;
    this.seqBase = this.nextSeq;
    this.streamedBefore = this.tokens.length;
  }

  /** The final event when the node went down after streaming the whole budget but before its done event. */
  lengthDone(requestId: string): TokenEvent {
    return create(TokenEventSchema, {
      requestId,
      seq: this.nextSeq,
      tokens: [],
      done: true,
      finishReason: FinishReason.LENGTH,
      usage: create(UsageSchema, {
        promptTokens: this.promptTokens,
        completionTokens: this.tokens.length,
        cachedTokens: this.firstCached ?? 0,
      }),
    });
  }
}
