import {
  admissionKinds,
  blocksFor,
  DEFAULT_FAIRNESS,
  FairPriorityRanker,
  nodeIterationInput,
  queuedPrefill,
  planNodeIteration,
  tickRanker,
  type IterationPlan,
} from '@mnemo/kv-core';
import type { TwinEvent } from '../core/event.queue.js';
import { NodeKv, type TwinPrefetch } from './node-kv.js';
import { restorePass, type PassLoad } from './restore-pass.js';
import { TwinDevice } from './twin-device.js';
import { TwinPassCosts } from './twin-pass.costs.js';
import { PeerRestore } from './twin-restores.js';
import { TwinSeq, type TwinRequest } from './twin-seq.js';
import { TwinTiers } from './twin-tiers.js';
import type { TwinNodeConfig, TwinNodeCosts, TwinNodeNet } from './twin-node.config.js';
import { TwinNodeHeartbeats } from './twin-node.heartbeats.js';
import { twinNodeCounters, twinNodeParts } from './twin-node.parts.js';

export type { TwinNodeConfig, TwinNodeCosts, TwinNodeNet } from './twin-node.config.js';

type Phase = 'prefill' | 'resume' | 'decode' | 'turn';

/**
 * A node-manager in virtual time: the batch loop of apps/node-manager (BatchScheduler) over the
 * kv-core policies it uses — nodeIterationInput / planNodeIteration, the block ledger, the KV
 * store's restore and prefetch planning — with each engine call priced by the compute port and
 * each modelled wait a timer that fires late by the measured lag. One iteration is a chain of
 * phases (prefill, resume, decode, a loop turn), each an event; arrivals join at the next plan.
 * Recompute preemption only (the sim engine's): swap preemption is part 2's.
 */
export class TwinNode {
  readonly device: TwinDevice;
  readonly kv: NodeKv;
  readonly tiers?: TwinTiers;
  private readonly seqs = new Map<string, TwinSeq>();
  private arrivals = 0;
  private busy = false;
  private phase: Phase = 'turn';
  private plan?: IterationPlan;
  private fresh: TwinSeq[] = [];
  /** What the node measures of its own costs from its prefill passes (heartbeats carry it), and when the pass began. */
  readonly passCosts: TwinPassCosts;
  private passStartedAt = 0;
  private recomputed: TwinSeq[] = [];
  private loads: PassLoad[] = [];
  private passOk = true;
  private readonly step: TwinEvent = { fire: (now) => this.advance(now) };
  /** Priority scheduling only: effective ranks (kv-core FairPriorityRanker). */
  private readonly ranker?: FairPriorityRanker;
  readonly counters = twinNodeCounters();
  private readonly heartbeats: TwinNodeHeartbeats;

  constructor(
    readonly config: TwinNodeConfig,
    private readonly costs: TwinNodeCosts,
    private readonly net: TwinNodeNet,
  ) {
    this.passCosts = new TwinPassCosts(config.maxBatch, costs.compute.attentionShare);
    if (config.scheduling === 'priority') this.ranker = new FairPriorityRanker(config.fairness ?? DEFAULT_FAIRNESS);
    ({ device: this.device, tiers: this.tiers, kv: this.kv } = twinNodeParts(config, costs, net));
    this.device.lookup = (id) => this.seqs.get(id);
    this.heartbeats = new TwinNodeHeartbeats(config, net, () => ({
      running: this.count('running'),
      waiting: this.count('waiting'),
      kvUsage: this.device.usage(),
      costs: this.passCosts.costs(),
      maxBatch: this.config.maxBatch,
      prefillBusyMs: this.passCosts.prefillBusyMs(net.events.now, queuedPrefill(this.seqs.values(), this.device)),
    }));
    const sweep: TwinEvent = {
      fire: (now) => {
        this.kv.housekeeping(now);
        net.events.after(Math.min(60_000, Math.max(1000, config.ssdTtlMs / 4)), sweep);
      },
    };
    net.events.after(1000, sweep);
  }

  get id(): string {
    return this.config.id;
  }

  get held(): number {
    return this.seqs.size;
  }

  count(phase: TwinSeq['phase']): number {
    let n = 0;
    for (const s of this.seqs.values()) if (s.phase === phase) n++;
    return n;
  }

  /** A dispatched request (AdmitInferenceUseCase): refused with a code, or queued and the loop woken. */
  admit(request: TwinRequest, now: number): 'admitted' | 'overloaded' | 'prompt_too_long' {
    const c = this.config;
    if (request.tokens.length >= c.maxContext) return 'prompt_too_long';
    const maxTokens = Math.min(request.maxTokens > 0 ? request.maxTokens : Infinity, c.maxContext - request.tokens.length);
    if (blocksFor(request.tokens.length + maxTokens - 1) > this.device.capacity) return 'prompt_too_long';
    if (this.count('waiting') >= c.maxWaiting) return 'overloaded';
    const seq = new TwinSeq({ ...request, maxTokens }, this.arrivals++, now, c.eosTokenId);
    this.seqs.set(seq.id, seq);
    this.kv.warm(seq, now);
    if (!this.busy) {
      this.busy = true;
      this.phase = 'turn';
      this.net.events.at(now, this.step);
    }
    return 'admitted';
  }

  prefetch(a: TwinPrefetch, now: number): number {
    return this.kv.prefetch(a, now);
  }

  forget(advisoryId: string): void {
    this.kv.forget(advisoryId);
  }

  /** The next phase of the running iteration, or a new iteration after a loop turn. */
  private advance(now: number): void {
    switch (this.phase) {
      case 'turn':
        return this.iterate(now);
      case 'prefill':
        return this.afterPrefill(now);
      case 'resume':
        return this.afterResume(now);
      case 'decode':
        return this.afterDecode(now);
    }
  }

  private lag(): number {
    return this.costs.overheads.timerLagMs.draw(this.net.rng);
  }

  /** Ends a phase at `end` plus the CPU the node spent meanwhile (exports). */
  private next(phase: Phase, end: number): void {
    this.kv.flushWrites();
    this.phase = phase;
    end += this.kv.cpuDebtMs;
    this.kv.cpuDebtMs = 0;
    this.net.events.at(end, this.step);
  }

  private iterate(now: number): void {
    const kvAvailable = { [this.config.model]: this.device.available };
    const input = nodeIterationInput(this.seqs.values(), this.device, {
      maxBatch: this.config.maxBatch,
      maxPrefillTokens: this.config.maxPrefillTokens,
      kvAvailable,
      ...(this.ranker ? { ranker: this.ranker } : {}),
      ...(this.config.holdLongPrompts ? { holdLongPrompts: true } : {}),
    });
    const plan = planNodeIteration({ ...input, kvAvailable }, this.ranker !== undefined);
    if (plan.prefill.length === 0 && plan.decode.length === 0 && plan.preempt.length === 0) {
      this.busy = false;
      return;
    }
    this.counters.iterations++;
    this.plan = plan;
    for (const id of plan.preempt) {
      const s = this.seqs.get(id)!;
      this.device.preempt(s);
      s.phase = 'waiting';
      s.preemptions++;
      this.counters.preemptions++;
    }
    const admitted = plan.prefill.map((id) => this.seqs.get(id)!);
    for (const s of admitted) s.phase = 'running';
    // As the live node's mnemo_node_queue_seconds: arrival to the iteration that admits it (a requeued one again).
    for (const s of admitted) {
      this.counters.queuedMs += now - s.arrivedAt;
      this.counters.queued++;
    }
    const kinds = admissionKinds(admitted);
    this.fresh = kinds.fresh;
    this.recomputed = kinds.recomputed;
    this.loads = [];
    if (this.fresh.length === 0) return this.afterPrefill(now);
    this.startPrefill(now);
  }

  /** engine.prefill: device hits attached, restores planned, prompts appended, the pass priced. */
  private startPrefill(now: number): void {
    this.passStartedAt = now;
    const fresh = this.fresh;
    const from: number[] = [];
    const hits: number[] = [];
    let tokens = 0;
    let attended = 0;
    for (const s of fresh) {
      const hit = this.device.admit(s);
      const plan = this.device.salt(s) === undefined ? undefined : this.kv.restorePlan(s, hit, now);
      if (plan) this.loads.push(plan);
      const start = plan ? plan.until : hit;
      hits.push(hit);
      from.push(start);
      s.cachedTokens = start;
      s.restoredTokens = start - hit;
      const n = s.request.tokens.length - start;
      tokens += n;
      attended += ((start + s.request.tokens.length - 1) * n) / 2;
    }
    if (!this.device.appendPrompts(fresh, hits, this.loads.length === 0)) {
      // The plan's estimate missed: everything admitted waits again and recomputes (BatchScheduler.requeue).
      this.counters.planMisses++;
      for (const r of this.loads) this.kv.restoreDone(r, false, now);
      this.requeue(fresh);
      this.fresh = [];
      return this.afterPrefill(now);
    }
    this.counters.prefills++;
    this.passCosts.passStarted(
      fresh.map((f) => ({ promptTokens: f.request.tokens.length, cachedTokens: f.cachedTokens })),
      now,
    );
    if (this.ranker) this.served = fresh.map((f) => ({ id: f.id, promptTokens: f.request.tokens.length }));
    this.net.onStep?.(
      this.config.id,
      'prefill',
      fresh.map((f) => f.id),
    );
    const computeMs = this.costs.compute.prefillMs(fresh.length, tokens, attended);
    const o = this.costs.overheads;
    let prompt = 0;
    for (const s of fresh) prompt += s.request.tokens.length;
    // The node's own CPU before the engine call (plan, block keys): the pass starts after it.
    now += o.prefillCpuMs + (o.prefillCpuMsPerKToken * prompt) / 1000;
    let end: number;
    this.passOk = true;
    if (this.loads.length === 0) end = now + computeMs + this.lag();
    else {
      const pass = restorePass(this.loads, computeMs, this.config.layers, now, this.costs.compute.restorePerChunkMs, () => this.lag());
      end = pass.end;
      this.counters.blockedMs += pass.blockedMs;
      // A peer that no longer holds a layer fails the pass when that layer's stream ends.
      for (const r of this.loads) {
        if (r instanceof PeerRestore && r.failsAt() < end) {
          end = Math.max(now, r.failsAt());
          this.passOk = false;
        }
      }
    }
    this.counters.busyMs += end - now;
    this.next('prefill', end);
  }

  private afterPrefill(now: number): void {
    const fresh = this.fresh;
    this.passCosts.passEnded();
    if (this.loads.length > 0) {
      for (const r of this.loads) this.kv.restoreDone(r, this.passOk, now);
      if (this.passOk) this.device.commit(fresh);
    }
    if (!this.passOk) {
      // A restore failed (a peer lost the chunk): the pass keeps nothing; the requests recompute.
      this.requeue(fresh);
    } else {
      this.passCosts.observe(fresh, this.loads, now - this.passStartedAt);
      for (const s of fresh) {
        if (this.seqs.get(s.id) !== s) continue;
        this.counters.cachedTokens += s.cachedTokens;
        this.counters.promptTokens += s.request.tokens.length;
        this.onToken(s, now);
      }
    }
    this.fresh = [];
    this.loads = [];
    this.passOk = true;
    const resumed = this.recomputed.filter((s) => this.seqs.get(s.id) === s);
    this.recomputed = [];
    if (resumed.length === 0) return this.afterResume(now);
    let tokens = 0;
    for (const s of resumed) {
      const n = this.device.resume(s);
      if (n < 0) {
        this.counters.planMisses++;
        s.phase = 'waiting';
        continue;
      }
      tokens += n;
    }
    this.net.onStep?.(
      this.config.id,
      'resume',
      resumed.map((r) => r.id),
    );
    const ms = this.costs.compute.prefillMs(resumed.length, tokens, 0);
    this.counters.busyMs += ms;
    this.next('resume', now + ms + this.lag());
  }

  private afterResume(now: number): void {
    const decode: TwinSeq[] = [];
    for (const id of this.plan!.decode) {
      const s = this.seqs.get(id);
      if (s && s.phase === 'running') decode.push(s);
    }
    if (decode.length === 0) return this.afterDecode(now, decode);
    let context = 0;
    for (const s of decode) context += s.kvLength + 1;
    if (!this.device.appendDecode(decode)) {
      this.counters.planMisses++;
      for (const s of decode) {
        this.device.preempt(s);
        s.phase = 'waiting';
        s.preemptions++;
      }
      return this.afterDecode(now, []);
    }
    this.counters.decodes++;
    this.net.onStep?.(
      this.config.id,
      'decode',
      decode.map((d) => d.id),
    );
    this.decoding = decode;
    const ms = this.costs.compute.decodeMs(decode.length, context);
    this.counters.busyMs += ms;
    const o = this.costs.overheads;
    this.next('decode', now + o.decodeCpuMs + o.decodeCpuMsPerSeq * decode.length + ms + this.lag());
  }

  private decoding: TwinSeq[] = [];
  /** Priority scheduling: the fresh prefills of this iteration, for the ranker. */
  private served: Array<{ id: string; promptTokens: number }> = [];

  private afterDecode(now: number, decode: TwinSeq[] = this.decoding): void {
    for (const s of decode) if (this.seqs.get(s.id) === s) this.onToken(s, now);
    this.decoding = [];
    if (this.ranker && this.plan) tickRanker(this.ranker, this.plan, this.served, this.seqs.values());
    this.served = [];
    this.plan = undefined;
    const turn = this.costs.overheads.loopTurnMs.draw(this.net.rng);
    // A free loop turn with nothing spent meanwhile: the next iteration plans now (one event fewer).
    if (turn === 0 && this.kv.cpuDebtMs === 0) {
      this.kv.flushWrites();
      return this.iterate(now);
    }
    this.next('turn', now + turn);
  }

  private onToken(s: TwinSeq, now: number): void {
    s.sample();
    s.generated++;
    if (s.firstTokenAt === undefined) {
      s.firstTokenAt = now;
      // As the live node's mnemo_time_to_first_token_seconds: arrival on the node to the first token.
      this.counters.firstTokenMs += now - s.arrivedAt;
      this.counters.firstTokens++;
      this.net.firstToken(s, now);
    }
    if (s.generated >= s.request.maxTokens) this.finish(s, now);
  }

  private finish(s: TwinSeq, now: number): void {
    if (s.firstTokenAt !== undefined) this.passCosts.sequenceFinished(now - s.firstTokenAt);
    this.seqs.delete(s.id);
    this.ranker?.forget(s.id);
    this.heartbeats.onRemoved(now);
    this.kv.cool(s.id);
    this.device.release(s);
    this.kv.ended(s);
    this.net.finished(s, now);
  }

  private requeue(seqs: readonly TwinSeq[]): void {
    for (const s of seqs) {
      if (this.seqs.get(s.id) !== s) continue;
      this.device.release(s);
      s.kvLength = 0;
      s.phase = 'waiting';
      s.preempted = false;
      s.firstTokenAt = undefined;
    }
  }
}
