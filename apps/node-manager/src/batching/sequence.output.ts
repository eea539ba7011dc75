import type { Engine } from '@mnemo/engine';
import { FinishReason } from '@mnemo/proto';
import type { Clock, ServiceMetrics } from '@mnemo/service-kit';
import type { PromptStore } from '../kv-store/prompt-store.port.js';
import type { SessionTailsPort } from '../kv-events/session.tails.js';
import type { NodeMetrics } from '../shared/node.metrics.js';
import type { PassCosts } from '../shared/pass.costs.js';
import type { Sequence } from '../shared/sequence.js';
import type { KvRecorderPort } from '../why/kv.recorder.js';
import { kvReuseOf } from './sequence.inputs.js';
import type { SequenceStore } from './sequence.store.js';
import type { TokenSink } from './token.sink.port.js';

/** What a sequence's tokens and its end touch: its inbox, the metrics, and everything that holds it. */
export interface OutputTargets {
  readonly store: SequenceStore;
  readonly engine: Engine;
  readonly sink: TokenSink;
  readonly clock: Clock;
  readonly nodeMetrics: NodeMetrics;
  readonly metrics: ServiceMetrics;
  readonly kvStore: PromptStore;
  readonly tails: SessionTailsPort;
  readonly recorder: KvRecorderPort;
  readonly passCosts: PassCosts;
  /** The priority ranker's bookkeeping for a sequence that left (absent under FCFS). */
  readonly forget?: (id: string) => void;
}

/**
 * A sequence's output: each new token goes to its inbox at once, and `finish` is its one exit,
 * which frees it everywhere it is held before the final event says so.
 */
export class SequenceOutput {
  private emptyWaiters: Array<() => void> = [];

  constructor(private readonly t: OutputTargets) {}

  /** Resolves once no sequence is left on the node. */
  whenEmpty(): Promise<void> {
    if (this.t.store.size === 0) return Promise.resolve();
    return new Promise<void>((resolve) => this.emptyWaiters.push(resolve));
  }

  token(seq: Sequence, token: number, cachedTokens?: number): void {
    const t = this.t;
    const now = t.clock.monotonicMs();
    seq.generated += 1;
    t.nodeMetrics.tokens.inc();
    if (cachedTokens !== undefined) {
      seq.cachedTokens = cachedTokens;
      t.nodeMetrics.cachedPromptTokens.inc(cachedTokens);
      t.nodeMetrics.computedPromptTokens.inc(seq.request.tokens.length - cachedTokens);
    }
    if (seq.firstTokenMs === undefined) {
      seq.firstTokenMs = now;
      t.metrics.timeToFirstToken.observe({ model: seq.request.model }, (now - seq.arrivedMs) / 1000);
      t.recorder.firstToken(seq, seq.cachedTokens);
    }
    seq.lastTokenMs = now;
    if (seq.stopTokenIds.has(token)) {
      // The stop/EOS token ends the text and is not part of it; it still counts as generated.
      this.finish(seq, FinishReason.STOP, [], 'ok');
    } else if (seq.generated >= seq.maxTokens) {
      this.finish(seq, FinishReason.LENGTH, [token], 'ok');
    } else {
      // The first event also tells how much of the prompt came from cache (a stop string may end the stream early).
      const usage =
        cachedTokens === undefined
          ? undefined
          : { promptTokens: seq.request.tokens.length, completionTokens: seq.generated, cachedTokens, ...kvReuseOf(seq) };
      t.sink.emit(seq, { requestId: seq.id, seq: seq.nextEventSeq++, tokens: [token], ...(usage ? { usage } : {}) });
    }
  }

  /** The one exit of a sequence: engine release, final event (done), metrics. */
  finish(seq: Sequence, reason: FinishReason, tokens: number[], outcome: string, error?: { code: string; message: string }): void {
    const t = this.t;
    if (seq.firstTokenMs !== undefined) t.passCosts.sequenceFinished(t.clock.monotonicMs() - seq.firstTokenMs);
    t.store.remove(seq.id);
    t.kvStore.cool?.(seq.id);
    t.forget?.(seq.id);
    t.engine.release(seq.id);
    // After the release: the partial chunk the sequence leaves is known only from it.
    t.tails.ended(seq.request);
    t.sink.emit(seq, {
      requestId: seq.id,
      seq: seq.nextEventSeq++,
      tokens,
      done: true,
      finishReason: reason,
      usage: {
        promptTokens: seq.request.tokens.length,
        completionTokens: seq.generated,
        cachedTokens: seq.cachedTokens,
        ...kvReuseOf(seq),
      },
      ...(error ? { error } : {}),
    });
    const now = t.clock.monotonicMs();
    t.metrics.requests.inc({ operation: 'infer', outcome });
    t.metrics.requestDuration.observe({ operation: 'infer' }, (now - seq.arrivedMs) / 1000);
    if (seq.generated > 1 && seq.firstTokenMs !== undefined && seq.lastTokenMs !== undefined) {
      t.metrics.timePerOutputToken.observe({ model: seq.request.model }, (seq.lastTokenMs - seq.firstTokenMs) / 1000 / (seq.generated - 1));
    }
    if (t.store.size === 0) for (const w of this.emptyWaiters.splice(0)) w();
  }
}
