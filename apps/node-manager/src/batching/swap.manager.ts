import { Inject, Injectable } from '@nestjs/common';
import { DEFAULT_SWAP_IN, ErrorCode, isMnemoError, PendingSwapIns, SwapInPolicy, type SwapInMode } from '@mnemo/kv-core';
import type { Engine, KvSwap } from '@mnemo/engine';
import { CLOCK, JsonLogger, type Clock } from '@mnemo/service-kit';
import { NODE_CONFIG, type NodeManagerConfig } from '../config/node-manager.config.js';
import { ENGINE } from '../engine/engine.factory.js';
import { NodeMetrics } from '../shared/node.metrics.js';
import type { Sequence } from '../shared/sequence.js';
import { SequenceStore } from './sequence.store.js';

/** An asynchronous swap-in's copy, settled either way. */
type PendingCopy = Promise<void>;

/**
 * Swap preemption for the batch scheduler (FastSwitch §3.2): swap-outs of one iteration go to
 * the engine as one batch of copies and are waited for (their blocks are only free after);
 * swap-ins are synchronous or asynchronous as the SwapInPolicy says from recent copy and
 * iteration times. An asynchronous swap-in puts its sequences in phase `swapping` — out of
 * planning, their blocks held — and {@link poll}, called at the start of every iteration,
 * hands back those whose copy has settled; one pending too long is waited for there, so the
 * copy workers are not starved by inference.
 */
@Injectable()
export class SwapManager {
  private readonly swap?: KvSwap;
  private readonly policy: SwapInPolicy;
  private readonly pending: PendingSwapIns<PendingCopy>;
  private readonly mode: SwapInMode;

  constructor(
    @Inject(ENGINE) engine: Engine,
    @Inject(NODE_CONFIG) config: NodeManagerConfig,
    @Inject(SequenceStore) private readonly store: SequenceStore,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(NodeMetrics) private readonly metrics: NodeMetrics,
    @Inject(JsonLogger) private readonly logger: JsonLogger,
  ) {
    if (config.NODE_PREEMPTION === 'swap') this.swap = engine.swap;
    // Overlap pays only where copies do not take compute's cores (Algorithm 1 assumes a GPU copy engine).
    this.policy = new SwapInPolicy({ ...DEFAULT_SWAP_IN, overlap: this.swap?.overlapsCompute ?? true });
    this.pending = new PendingSwapIns(this.policy);
    this.mode = (config.NODE_SWAP_IN as SwapInMode | undefined) ?? 'adaptive';
  }

  /** Whether this preempted sequence comes back by swap-in (no compute) rather than recompute. */
  isSwapped(seq: Sequence): boolean {
    return this.swap?.isSwapped(seq.id) ?? false;
  }

  get pendingSwapIns(): number {
    return this.pending.size;
  }

  /** Swaps the sequences out; returns those it could not take (no swap, no host room): preempt them by recompute. */
  async swapOut(seqs: readonly Sequence[]): Promise<Sequence[]> {
    if (!this.swap || seqs.length === 0) return [...seqs];
    const t0 = this.clock.monotonicMs();
    const report = await this.swap.swapOut(seqs.map((s) => s.id));
    this.metrics.swapWait.inc((this.clock.monotonicMs() - t0) / 1000);
    this.metrics.swapBytes.inc({ direction: 'out' }, report.bytes);
    this.metrics.swapHeldBlocks.inc(report.heldBlocks ?? 0);
    this.metrics.swaps.inc({ direction: 'out', mode: 'sync' }, report.seqIds.length);
    const done = new Set(report.seqIds);
    return seqs.filter((s) => !done.has(s.id));
  }

  /**
   * Swaps admitted sequences back in. Synchronous: they are running when this returns.
   * Asynchronous (when others decode this iteration and the copy is predicted to take long):
   * they are `swapping` until the copy settles (then running; {@link poll} forces it when it takes too long). A swap-in the device cannot
   * take (a plan miss) leaves them waiting, still swapped out.
   */
  async swapIn(seqs: readonly Sequence[], blocks: number, othersDecode: boolean): Promise<void> {
    if (!this.swap || seqs.length === 0) return;
    const mode = this.policy.decide(this.mode, blocks, othersDecode);
    const t0 = this.clock.monotonicMs();
    const started = performance.now();
    for (const s of seqs) s.phase = 'swapping';
    const done = this.swap.swapIn(seqs.map((s) => s.id)).then(
      (report) => {
        this.policy.recordSwap(report.blocks, performance.now() - started);
        this.metrics.swapBytes.inc({ direction: 'in' }, report.bytes);
        this.metrics.swaps.inc({ direction: 'in', mode }, report.seqIds.length);
        const back = new Set(report.seqIds);
        for (const s of seqs) {
          if (this.store.get(s.id) !== s) continue;
          // Left out: its host copy could not be used (held KV failed its check); it recomputes.
          if (!back.has(s.id)) {
            s.phase = 'waiting';
            continue;
          }
          s.phase = 'running';
          s.preempted = false;
        }
      },
      (e: unknown) => {
        const code = isMnemoError(e) ? e.code : ErrorCode.Internal;
        if (code === ErrorCode.Overloaded) this.metrics.kvPlanMisses.inc();
        this.logger.emit(code === ErrorCode.Overloaded ? 'warn' : 'error', 'swap-in failed: sequences wait, still swapped out', {
          seqs: seqs.map((s) => s.id),
          err: e instanceof Error ? e : String(e),
        });
        for (const s of seqs) if (this.store.get(s.id) === s) s.phase = 'waiting';
      },
    );
    if (mode === 'sync') {
      await done;
      this.metrics.swapWait.inc((this.clock.monotonicMs() - t0) / 1000);
      return;
    }
    this.pending.add(done);
    void done.then(() => this.pending.settle(done));
  }

  /**
   * Start of an iteration: drops settled swap-ins (their sequences are running again) and waits
   * for any pending longer than the policy allows. Resolves once that is done.
   */
  async poll(): Promise<void> {
    const overdue = this.pending.startIteration();
    if (overdue.length === 0) return;
    const t0 = this.clock.monotonicMs();
    for (const done of overdue) await done;
    this.metrics.swapWait.inc((this.clock.monotonicMs() - t0) / 1000);
    this.pending.dropSettled();
  }

  /** Nothing else to do this iteration: wait for the oldest pending swap-in. */
  async settleOne(): Promise<void> {
    const done = this.pending.oldest();
    if (!done) return;
    const t0 = this.clock.monotonicMs();
    await done;
    this.metrics.swapWait.inc((this.clock.monotonicMs() - t0) / 1000);
    await this.poll();
  }

  recordIteration(ms: number): void {
    this.policy.recordIteration(ms);
  }
}
