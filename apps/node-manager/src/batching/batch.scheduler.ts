import { setImmediate as nextLoopTurn } from 'node:timers/promises';
import { Inject, Injectable, Optional } from '@nestjs/common';
import { admissionKinds, blocksFor, ErrorCode, FairPriorityRanker, isMnemoError, type QueuedPrefill } from '@mnemo/kv-core';
import type { Engine, TokenOutput } from '@mnemo/engine';
import { FinishReason } from '@mnemo/proto';
import { JsonLogger, ServiceMetrics } from '@mnemo/service-kit';
import { NODE_CONFIG, type NodeManagerConfig } from '../config/node-manager.config.js';
import { ENGINE } from '../engine/engine.factory.js';
import { CLOCK, type Clock } from '@mnemo/service-kit';
import { NodeMetrics } from '../shared/node.metrics.js';
import { PassCosts } from '../shared/pass.costs.js';
import type { Sequence } from '../shared/sequence.js';
import { SequenceStore } from './sequence.store.js';
import { TOKEN_SINK, type TokenSink } from './token.sink.port.js';
import { NO_PROMPT_STORE, PROMPT_STORE, type PromptStore } from '../kv-store/prompt-store.port.js';
import { SwapManager } from './swap.manager.js';
import { KV_RECORDER, NO_KV_RECORDER, type KvRecorderPort } from '../why/kv.recorder.js';
import { prefillInput } from './sequence.inputs.js';
import { SequenceOutput } from './sequence.output.js';
import { PrefillInputs } from './prefill.inputs.js';
import { planIterationOf, queuedPrefillOf, rankIteration, type IterationSources } from './iteration.view.js';
import { CROSS_MODEL_REUSE, NO_CROSS_MODEL, type CrossModelPort } from '../droidspeak/cross-model.reuse.js';
import { kvReuseReport } from '../shared/kv-reuse.report.js';
import { NO_SESSION_TAILS, SESSION_TAILS, type SessionTailsPort } from '../kv-events/session.tails.js';

export type CancelReason = 'client' | 'deadline' | 'shutdown' | 'abandoned';

/**
 * The node's iteration-level scheduler (continuous batching). Each iteration asks the policy
 * (kv-core `planIteration`) which waiting sequences to admit, which running ones to decode and
 * — when the device KV pool cannot give every decoding sequence its next block — which running
 * ones to preempt (their KV is dropped and recomputed when they are admitted again, so a full
 * pool slows the batch down instead of failing it). It then runs one engine prefill (new
 * requests, starting from the device prefix cache), one resume (preempted ones) and one decode
 * call, and streams each new token to its request's inbox at once. Sequences join and leave
 * between iterations, so a long request never holds a short one back.
 *
 * Cancellation is immediate: the sequence leaves the store and the engine releases it even
 * while an engine call that includes it is in flight; that call's output for it is dropped.
 */
@Injectable()
export class BatchScheduler {
  private running?: Promise<void>;
  private stopped = false;
  /** Priority scheduling only: effective ranks (API priority tempered by aging and token fairness). */
  private readonly ranker?: FairPriorityRanker;
  /** Each new request's engine input and the warm start of its restore. */
  private readonly inputs: PrefillInputs;
  private readonly view: IterationSources;
  private readonly output: SequenceOutput;

  constructor(
    @Inject(SequenceStore) private readonly store: SequenceStore,
    @Inject(ENGINE) private readonly engine: Engine,
    @Inject(TOKEN_SINK) private readonly sink: TokenSink,
    @Inject(NODE_CONFIG) private readonly config: NodeManagerConfig,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(NodeMetrics) private readonly nodeMetrics: NodeMetrics,
    @Inject(ServiceMetrics) private readonly metrics: ServiceMetrics,
    @Inject(JsonLogger) private readonly logger: JsonLogger,
    @Inject(PROMPT_STORE) private readonly kvStore: PromptStore = NO_PROMPT_STORE,
    @Inject(SwapManager)
    private readonly swaps: SwapManager = new SwapManager(
      engine,
      { ...config, NODE_PREEMPTION: 'recompute' },
      store,
      clock,
      nodeMetrics,
      logger,
    ),
    @Optional() @Inject(CROSS_MODEL_REUSE) private readonly crossModel: CrossModelPort = NO_CROSS_MODEL,
    @Optional() @Inject(SESSION_TAILS) private readonly tails: SessionTailsPort = NO_SESSION_TAILS,
    @Optional() @Inject(KV_RECORDER) private readonly recorder: KvRecorderPort = NO_KV_RECORDER,
    @Optional() @Inject(PassCosts) private readonly passCosts: PassCosts = new PassCosts(),
  ) {
    if (config.NODE_SCHEDULING === 'priority') {
      const off = (n: number | undefined) => (n ? n : Infinity);
      this.ranker = new FairPriorityRanker({
        updateEvery: config.NODE_PRIORITY_UPDATE_EVERY ?? 4,
        agingIterations: off(config.NODE_FAIRNESS_AGING_ITERATIONS ?? 32),
        tokensPerLevel: off(config.NODE_FAIRNESS_TOKENS_PER_LEVEL),
      });
    }
    const ranker = this.ranker;
    const forget = ranker ? { forget: (id: string) => ranker.forget(id) } : {};
    this.output = new SequenceOutput({ store, engine, sink, clock, nodeMetrics, metrics, kvStore, tails, recorder, passCosts, ...forget });
    this.inputs = new PrefillInputs({ config, engine, kvStore, crossModel, recorder, logger });
    // What planning reads (iteration.view.ts): fixed at construction, so built once rather than every iteration.
    this.view = {
      engine,
      store,
      kvStore,
      config,
      ...(this.ranker ? { ranker: this.ranker } : {}),
      isSwapped: (seq) => this.swaps.isSwapped(seq),
      prefillInput: (seq) => this.inputs.of(seq),
    };
    if (config.NODE_KV_WARM !== 'off') store.onAdded((seq) => this.inputs.warm(seq));
  }

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
    const started = this.clock.monotonicMs();
    this.expireDeadlines();
    await this.swaps.poll();
    const plan = planIterationOf(this.view);
    if (plan.prefill.length === 0 && plan.decode.length === 0 && plan.preempt.length === 0) {
      if (await this.runStreamed()) return true;
      if (this.swaps.pendingSwapIns === 0) return false;
      // Only swap-ins are under way: wait for one rather than spin.
      await this.swaps.settleOne();
      return true;
    }
    this.nodeMetrics.iterations.inc();
    const victims = plan.preempt.map((id) => this.store.get(id)!);
    for (const s of await this.swaps.swapOut(victims)) this.engine.preempt(s.id);
    for (const s of victims) this.markPreempted(s);
    let batched = false;
    const admitted = plan.prefill.map((id) => this.store.get(id)!);
    for (const s of admitted) s.phase = 'running';
    const kinds = admissionKinds(admitted.map((s) => ({ s, preempted: s.preempted, swapped: this.swaps.isSwapped(s) })));
    const [swappedIn, fresh, recomputed] = [kinds.swappedIn, kinds.fresh, kinds.recomputed].map((xs) => xs.map((x) => x.s));
    for (const s of fresh) this.nodeMetrics.queueWait.observe((started - s.arrivedMs) / 1000);
    if (swappedIn.length > 0) {
      const blocks = swappedIn.reduce((n, s) => n + this.engine.resumeBlocks(s.id), 0);
      await this.swaps.swapIn(swappedIn, blocks, plan.decode.length > 0);
    }
    if (fresh.length > 0) {
      this.nodeMetrics.batchSize.observe({ phase: 'prefill' }, fresh.length);
      batched ||= fresh.length > 1;
      for (const seq of fresh) this.recorder.prefillStarted(seq);
      const passStarted = this.clock.monotonicMs();
      this.passCosts.passStarted(
        fresh.map((seq) => this.inputs.expected(seq)),
        passStarted,
      );
      await this.step(fresh, () => this.engine.prefill(fresh.map((seq) => this.inputs.of(seq)))).finally(() => this.passCosts.passEnded());
      this.passCosts.passOf(fresh, this.clock.monotonicMs() - passStarted);
      this.rerunDropped(fresh);
      // A warm restore the pass did not take (nothing left to restore) goes now, not at its TTL.
      for (const seq of fresh) this.kvStore.cool?.(seq.id);
    }
    const resumed = recomputed.filter((s) => this.store.get(s.id) === s);
    if (resumed.length > 0) {
      await this.step(resumed, async () => {
        await this.engine.resume(resumed.map((s) => s.id));
        for (const s of resumed) s.preempted = false;
        return [];
      });
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
    await this.runStreamed();
    if (this.ranker) rankIteration(this.ranker, plan, fresh, this.store);
    this.swaps.recordIteration(this.clock.monotonicMs() - started);
    return true;
  }

  /**
   * Streamed sequences (contexts beyond their model's device cache) run as their own batch, one
   * per model: a running one decodes alone; a waiting one starts once its model streams nothing
   * and the memory the stream takes is free — it waits, keeping its place, until then. The batch
   * planner never sees them, so they are never preempted. False when none ran.
   */
  private async runStreamed(): Promise<boolean> {
    const stream = this.engine.layerStream;
    if (!stream) return false;
    let ran = false;
    for (const seq of [...this.store.all()]) {
      if (!seq.streamed || seq.paused || this.store.get(seq.id) !== seq) continue;
      if (seq.phase === 'running') {
        ran = true;
        await this.step([seq], () => this.engine.decode([seq.id]));
        continue;
      }
      const contextBlocks = blocksFor(seq.request.tokens.length + seq.maxTokens - 1);
      if (seq.phase !== 'waiting' || !stream.canStart(seq.request.model, contextBlocks)) continue;
      ran = true;
      seq.phase = 'running';
      this.nodeMetrics.batchSize.observe({ phase: 'prefill' }, 1);
      // Its KV is in the stream, not the paged cache: it neither reuses nor leaves a shared prefix.
      await this.step([seq], () => this.engine.prefill([{ ...prefillInput(seq), cacheSalt: undefined, layerStream: { contextBlocks } }]));
    }
    return ran;
  }

  /** What the waiting sequences still have to prefill, as planning would price them now (the heartbeat reports it). */
  queuedPrefill(): QueuedPrefill[] {
    return queuedPrefillOf(this.view);
  }

  /** Drops a running sequence's device KV by recompute preemption; it waits, keeping its place, until admitted again. */
  private preempt(seq: Sequence): void {
    this.engine.preempt(seq.id);
    this.markPreempted(seq);
  }

  /** A sequence whose device KV is gone (swapped out or dropped) waits, keeping its place, until admitted again. */
  private markPreempted(seq: Sequence): void {
    seq.phase = 'waiting';
    seq.preempted = true;
    seq.preemptions++;
    this.nodeMetrics.preemptions.inc();
    this.logger.emit('debug', 'sequence preempted', { requestId: seq.id, preemptions: seq.preemptions });
  }

  /** Stops a request now: frees it in the engine and tells its inbox. False if it is not here. */
  cancel(requestId: string, reason: CancelReason): boolean {
    const seq = this.store.get(requestId);
    if (!seq) return false;
    this.nodeMetrics.cancelled.inc({ reason });
    const code = reason === 'deadline' ? ErrorCode.Timeout : ErrorCode.Cancelled;
    this.output.finish(seq, FinishReason.CANCELLED, [], code, {
      code,
      message: reason === 'deadline' ? 'deadline passed' : `cancelled (${reason})`,
    });
    return true;
  }

  /** Waits until every sequence has finished or `timeoutMs` passed; then cancels what is left. */
  async drain(timeoutMs: number): Promise<void> {
    if (this.store.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.output.whenEmpty(), new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
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
      // Out of blocks, or a stored copy failed its checksum (now dropped): run again, recomputing.
      if (code === ErrorCode.Overloaded || code === ErrorCode.DataLoss) return this.requeue(seqs, e, code);
      if (code === ErrorCode.Internal)
        this.logger.emit('error', 'engine call failed', { seqs: seqs.map((s) => s.id), err: e instanceof Error ? e : String(e) });
      for (const s of seqs) {
        if (this.store.get(s.id) === s)
          this.output.finish(s, FinishReason.ERROR, [], code, { code, message: (e as Error)?.message ?? String(e) });
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
      if (out.crossModel) seq.kvReuse = kvReuseReport(out.crossModel, this.engine.kvLayout(seq.request.model)?.layers ?? 0);
      if (out.eCache) this.crossModel.storeE?.(seq, out.eCache);
      this.output.token(seq, out.token, out.cachedTokens);
    }
  }

  /**
   * A fresh sequence the prefill gave no output, though it is still here: its restore failed (a
   * peer past its chunk deadline, a corrupt copy) and the engine went on without it. It waits
   * for a later pass and recomputes (the failed source is left out for a while), while the rest
   * of the batch has its first tokens already.
   */
  private rerunDropped(fresh: readonly Sequence[]): void {
    for (const s of fresh) {
      if (this.store.get(s.id) !== s || s.phase !== 'running' || s.generated > 0) continue;
      this.engine.release(s.id);
      s.phase = 'waiting';
      s.preempted = false;
      this.nodeMetrics.restoreFallbacks.inc();
      this.logger.emit('warn', 'KV restore failed: the sequence recomputes; its batch went on', { requestId: s.id });
    }
  }

  /**
   * The engine ran out of KV blocks although the plan said they fit (a bug in an estimate):
   * the call's sequences wait and are recomputed rather than failed.
   */
  private requeue(seqs: Sequence[], e: unknown, code: ErrorCode): void {
    if (code === ErrorCode.Overloaded) this.nodeMetrics.kvPlanMisses.inc();
    const why = code === ErrorCode.Overloaded ? 'KV plan missed' : 'stored KV unusable';
    this.logger.emit('warn', `${why}: sequences requeued`, {
      seqs: seqs.map((s) => s.id),
      err: e instanceof Error ? e.message : String(e),
    });
    for (const s of seqs) {
      if (this.store.get(s.id) !== s) continue;
      if (s.generated === 0) {
        // Never prefilled: nothing to keep.
        this.engine.release(s.id);
        s.phase = 'waiting';
        s.preempted = false;
      } else if (s.phase === 'running' && s.streamed) {
        // Everything was taken at its start: running short is a bug, and it cannot be preempted.
        this.output.finish(s, FinishReason.ERROR, [], code, { code, message: e instanceof Error ? e.message : String(e) });
      } else if (s.phase === 'running') this.preempt(s);
    }
  }

  private expireDeadlines(): void {
    const now = this.clock.unixMs();
    for (const s of this.store.all()) {
      if (s.request.deadlineUnixMs > 0 && now > s.request.deadlineUnixMs) this.cancel(s.id, 'deadline');
    }
  }
}
