import { setImmediate as nextLoopTurn } from 'node:timers/promises';
import { Inject, Injectable } from '@nestjs/common';
import { ErrorCode, isMnemoError, planIteration } from '@mnemo/kv-core';
import type { Engine, TokenOutput } from '@mnemo/engine';
import { FinishReason } from '@mnemo/proto';
import { JsonLogger, ServiceMetrics } from '@mnemo/service-kit';
import { NODE_CONFIG, type NodeManagerConfig } from '../config/node-manager.config.js';
import { ENGINE } from '../engine/engine.factory.js';
import { CLOCK, type Clock } from '@mnemo/service-kit';
import { NodeMetrics } from '../shared/node.metrics.js';
import type { Sequence } from './sequence.js';
import { SequenceStore } from './sequence.store.js';
import { TOKEN_SINK, type TokenSink } from './token.sink.port.js';

export type CancelReason = 'client' | 'deadline' | 'shutdown' | 'abandoned';

/**
 * The node's iteration-level scheduler (continuous batching). Each iteration asks the policy
 * (kv-core `planIteration`) which waiting sequences to admit and which running ones to
 * decode, runs one engine prefill and one engine decode call, and streams each new token to
 * its request's inbox at once. Sequences join and leave between iterations, so a long request
 * never holds a short one back.
 *
 * Cancellation is immediate: the sequence leaves the store and the engine releases it even
 * while an engine call that includes it is in flight; that call's output for it is dropped.
 */
@Injectable()
export class BatchScheduler {
  private running?: Promise<void>;
  private stopped = false;
  private emptyWaiters: Array<() => void> = [];

  constructor(
    @Inject(SequenceStore) private readonly store: SequenceStore,
    @Inject(ENGINE) private readonly engine: Engine,
    @Inject(TOKEN_SINK) private readonly sink: TokenSink,
    @Inject(NODE_CONFIG) private readonly config: NodeManagerConfig,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(NodeMetrics) private readonly nodeMetrics: NodeMetrics,
    @Inject(ServiceMetrics) private readonly metrics: ServiceMetrics,
    @Inject(JsonLogger) private readonly logger: JsonLogger,
  ) {}

  /** Runs iterations in the background until `stop`. */
  start(): void {
    this.running ??= (async () => {
      while (!this.stopped) {
        if (!this.store.hasRunnable()) {
          await this.store.whenWork();
          continue;
        }
        try {
          await this.runIteration();
        } catch (e) {
          // A bug here must not stop the node; the failing call's sequences were already failed.
          this.logger.emit('error', 'iteration failed', { err: e instanceof Error ? e : String(e) });
        }
        // A CPU engine resolves without a macrotask: let arrivals, cancels and heartbeats in.
        await nextLoopTurn();
      }
    })();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.store.interrupt();
    await this.running;
  }

  /** One iteration; false when there was nothing to do. */
  async runIteration(): Promise<boolean> {
    this.expireDeadlines();
    const plan = planIteration({
      running: this.store.states('running'),
      waiting: this.store.states('waiting'),
      maxBatch: this.config.NODE_MAX_BATCH!,
      maxPrefillTokens: this.config.NODE_MAX_PREFILL_TOKENS!,
    });
    if (plan.prefill.length === 0 && plan.decode.length === 0) return false;
    this.nodeMetrics.iterations.inc();
    let batched = false;

    if (plan.prefill.length > 0) {
      const seqs = plan.prefill.map((id) => this.store.get(id)!);
      for (const s of seqs) s.phase = 'running';
      this.nodeMetrics.batchSize.observe({ phase: 'prefill' }, seqs.length);
      batched ||= seqs.length > 1;
      await this.step(seqs, () =>
        this.engine.prefill(
          seqs.map((s) => ({
            seqId: s.id,
            model: s.request.model,
            tokens: s.request.tokens,
            sampling: {
              temperature: s.request.sampling?.temperature ?? 1,
              topP: s.request.sampling?.topP || 1,
              seed: Number(s.request.sampling?.seed ?? 0n),
            },
          })),
        ),
      );
    }

    // Sequences cancelled or finished by the prefill call are no longer running.
    const decode = plan.decode.filter((id) => this.store.get(id)?.phase === 'running');
    if (decode.length > 0) {
      const seqs = decode.map((id) => this.store.get(id)!);
      this.nodeMetrics.batchSize.observe({ phase: 'decode' }, seqs.length);
      batched ||= seqs.length > 1;
      await this.step(seqs, () => this.engine.decode(decode));
    }
    if (batched) this.nodeMetrics.batchedIterations.inc();
    return true;
  }

  /** Stops a request now: frees it in the engine and tells its inbox. False if it is not here. */
  cancel(requestId: string, reason: CancelReason): boolean {
    const seq = this.store.get(requestId);
    if (!seq) return false;
    this.nodeMetrics.cancelled.inc({ reason });
    const code = reason === 'deadline' ? ErrorCode.Timeout : ErrorCode.Cancelled;
    this.finish(seq, FinishReason.CANCELLED, [], code, { code, message: reason === 'deadline' ? 'deadline passed' : `cancelled (${reason})` });
    return true;
  }

  /** Waits until every sequence has finished or `timeoutMs` passed; then cancels what is left. */
  async drain(timeoutMs: number): Promise<void> {
    if (this.store.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        new Promise<void>((resolve) => this.emptyWaiters.push(resolve)),
        new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs))),
      ]);
      clearTimeout(timer);
    }
    for (const s of this.store.all()) this.cancel(s.id, 'shutdown');
  }

  private async step(seqs: Sequence[], call: () => Promise<TokenOutput[]>): Promise<void> {
    let outputs: TokenOutput[];
    try {
      outputs = await call();
    } catch (e) {
      const code = isMnemoError(e) ? e.code : ErrorCode.Internal;
      if (code === ErrorCode.Internal) this.logger.emit('error', 'engine call failed', { seqs: seqs.map((s) => s.id), err: e instanceof Error ? e : String(e) });
      for (const s of seqs) {
        if (this.store.get(s.id) === s) this.finish(s, FinishReason.ERROR, [], code, { code, message: (e as Error)?.message ?? String(e) });
      }
      return;
    }
    for (const out of outputs) {
      const seq = this.store.get(out.seqId);
      // Cancelled while the call ran: make sure the engine holds nothing for it (release is idempotent).
      if (!seq || seq.phase !== 'running') {
        this.engine.release(out.seqId);
        continue;
      }
      this.onToken(seq, out.token);
    }
  }

  private onToken(seq: Sequence, token: number): void {
    const now = this.clock.monotonicMs();
    seq.generated += 1;
    this.nodeMetrics.tokens.inc();
    if (seq.firstTokenMs === undefined) {
      seq.firstTokenMs = now;
      this.metrics.timeToFirstToken.observe({ model: seq.request.model }, (now - seq.arrivedMs) / 1000);
    }
    seq.lastTokenMs = now;
    if (seq.stopTokenIds.has(token)) {
      // The stop/EOS token ends the text and is not part of it; it still counts as generated.
      this.finish(seq, FinishReason.STOP, [], 'ok');
    } else if (seq.generated >= seq.maxTokens) {
      this.finish(seq, FinishReason.LENGTH, [token], 'ok');
    } else {
      this.sink.emit(seq, { requestId: seq.id, seq: seq.nextEventSeq++, tokens: [token] });
    }
  }

  /** The one exit of a sequence: engine release, final event (done), metrics. */
  private finish(seq: Sequence, reason: FinishReason, tokens: number[], outcome: string, error?: { code: string; message: string }): void {
    this.store.remove(seq.id);
    this.engine.release(seq.id);
    this.sink.emit(seq, {
      requestId: seq.id,
      seq: seq.nextEventSeq++,
      tokens,
      done: true,
      finishReason: reason,
      usage: { promptTokens: seq.request.tokens.length, completionTokens: seq.generated },
      ...(error ? { error } : {}),
    });
    const now = this.clock.monotonicMs();
    this.metrics.requests.inc({ operation: 'infer', outcome });
    this.metrics.requestDuration.observe({ operation: 'infer' }, (now - seq.arrivedMs) / 1000);
    if (seq.generated > 1 && seq.firstTokenMs !== undefined && seq.lastTokenMs !== undefined) {
      this.metrics.timePerOutputToken.observe({ model: seq.request.model }, (seq.lastTokenMs - seq.firstTokenMs) / 1000 / (seq.generated - 1));
    }
    if (this.store.size === 0) for (const w of this.emptyWaiters.splice(0)) w();
  }

  private expireDeadlines(): void {
    const now = this.clock.unixMs();
    for (const s of this.store.all()) {
      if (s.request.deadlineUnixMs > 0 && now > s.request.deadlineUnixMs) this.cancel(s.id, 'deadline');
    }
  }
}
