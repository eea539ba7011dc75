import {
  admissionKinds,
  blocksFor,
  DEFAULT_SWAP_IN,
  DeviceBlockManager,
  FairPriorityRanker,
  nodeIterationInput,
  PendingSwapIns,
  planNodeIteration,
  countSwapRanges,
  reusedSwapBlocks,
  SwapInPolicy,
  tickRanker,
  type NodeKvView,
} from '@mnemo/kv-core';
import { call, EventQueue } from '../core/event.queue.js';
import { kvBytesPerToken } from '../costs/hardware.tables.js';
import { transferMs } from '../costs/transfer.port.js';
import type { SwapConversation, SwapInstanceConfig, SwapRunResult, SwapSeq as Seq } from './swap-instance.types.js';
import { HostSwapCopies } from './host-swap.copies.js';
import { PrefixTurns } from './prefix-turns.js';
import { swapRunCounters, swapRunResult } from './swap-run.result.js';

const BLOCK_TOKENS = 16;
const POOL = 'm';

/**
 * One GPU serving conversations under preemptive priority scheduling with swap (FastSwitch §3–4),
 * iteration by iteration in virtual time. Every decision is Mnemo's own kv-core code, the same the
 * node-manager's batch loop and swap manager call: `nodeIterationInput` / `planNodeIteration` with
 * the `FairPriorityRanker` (ranks refreshed every `updateEvery` iterations from the trace),
 * `admissionKinds`, `tickRanker`; the `DeviceBlockManager` with or without block groups; copies cut
 * by `planSwapRanges` (counted by `countSwapRanges`: one call per run, or vLLM's one per block, layer and K/V; the
 * paper's groups on vLLM's layout, one per run, layer and K/V);
 * `reusedSwapBlocks` for host copies; `SwapInPolicy` + `PendingSwapIns` for sync or async
 * swap-in. What the twin adds is time: compute from the compute port, each copy as
 * `calls × dispatch + bytes / bandwidth` on its direction of the link, and the bookkeeping of host
 * memory (copies kept per conversation, least recently used given up first when room runs out).
 */
export class SwapInstanceSim {
  private readonly q = new EventQueue();
  private readonly mgr: DeviceBlockManager;
  private readonly ranker: FairPriorityRanker;
  private readonly policy = new SwapInPolicy(DEFAULT_SWAP_IN);
  private readonly pending: PendingSwapIns<Seq>;
  private readonly seqs = new Map<string, Seq>();
  private readonly host: HostSwapCopies;
  private readonly blockBytes: number;
  private h2dFreeAt = 0;
  private readonly prefix: PrefixTurns;
  private arrivals = 0;
  private iteration = 0;
  private busy = false;
  private readonly history: number[];
  private readonly kv: NodeKvView;
  private readonly out = swapRunCounters();

  constructor(
    private readonly c: SwapInstanceConfig,
    private readonly conversations: readonly SwapConversation[],
  ) {
    this.mgr = new DeviceBlockManager(c.deviceBlocks, undefined, c.mechanisms.groups ? { groupBlocks: c.groupBlocks } : undefined);
    // Ranks are the trace's levels, held still between updates: no aging, no token fairness.
    this.ranker = new FairPriorityRanker({ updateEvery: c.updateEvery, agingIterations: Infinity, tokensPerLevel: Infinity });
    this.pending = new PendingSwapIns(this.policy);
    this.blockBytes = BLOCK_TOKENS * kvBytesPerToken(c.model);
    this.host = new HostSwapCopies(Math.floor(c.hostBytes / this.blockBytes));
    this.prefix = new PrefixTurns({
      config: c,
      host: this.host,
      out: this.out,
      blockBytes: this.blockBytes,
      calls: (blocks, from) => this.calls(blocks, from),
      count: (blocks, calls) => this.count(blocks, calls),
      busyConversations: () => this.swappedOutConversations(),
    });
    this.history = conversations.map(() => 0);
    this.kv = {
      decodeBlocks: (id) => (this.seqs.get(id)!.tokens % BLOCK_TOKENS === 0 ? 1 : 0),
      exclusiveBlocks: (id) => this.seqs.get(id)!.blocks.length,
      resumeBlocks: (id) => blocksFor(this.seqs.get(id)!.tokens),
      admission: (id) => ({
        blocks: blocksFor(this.seqs.get(id)!.promptTokens),
        sharing: false,
        deviceTokens: 0,
        restorableUntil: () => 0,
      }),
    };
  }

  run(): SwapRunResult {
    this.conversations.forEach((conv, i) =>
      this.q.at(
        conv.arrivalMs,
        call((now) => this.arrive(i, 0, now)),
      ),
    );
    this.q.run();
    return swapRunResult(this.out, { requests: this.arrivals, iterations: this.iteration, endMs: this.q.now });
  }

  /**
   * Turn `turn` of conversation `conv` arrives. vLLM 0.3.3, which FastSwitch builds on, has no
   * prefix cache: the prompt is the whole history, computed again (only swap preemption keeps KV).
   */
  private arrive(conv: number, turn: number, now: number): void {
    const t = this.conversations[conv]!.turns[turn]!;
    const prompt = this.history[conv]! + t.userTokens;
    // One that could never fit alone would be swapped out and in for ever (vLLM refuses it by max_model_len).
    if (blocksFor(prompt + t.replyTokens) > this.c.deviceBlocks)
      throw new RangeError(
        `conversation ${conv} turn ${turn}: ${prompt + t.replyTokens} tokens do not fit ${this.c.deviceBlocks} device blocks`,
      );
    const id = `c${conv}t${turn}`;
    // The previous turn's copy (it holds that turn's KV: its prompt and reply less the last token).
    const copy = this.c.prefixKept && turn > 0 ? (this.host.get(conv) ?? 0) : 0;
    const base = this.c.trace.level(conv, Math.floor(this.iteration / this.c.updateEvery));
    this.seqs.set(id, {
      id,
      pool: POOL,
      priority: base,
      arrivalSeq: this.arrivals++,
      phase: 'waiting',
      paused: false,
      streamed: false,
      preempted: false,
      swapped: false,
      promptTokens: prompt,
      conv,
      turn,
      tokens: 0,
      generated: 0,
      reply: t.replyTokens,
      arrivalMs: now,
      lastTokenMs: now,
      blocks: [],
      doneAt: 0,
      prefixTokens: Math.min(copy, this.history[conv]!),
    });
    this.kick(now);
  }

  private kick(now: number): void {
    if (this.busy) return;
    this.busy = true;
    this.q.at(
      now,
      call((t) => this.step(t)),
    );
  }

  /** One iteration (Algorithm 1's order): settle copies, plan, swap out, swap in, prefill, decode. */
  private step(now: number): void {
    let stall = this.prefix.takeTurnEndStall();
    // Step 1: asynchronous swap-ins whose copy ended are running again; those overdue are waited for.
    for (const s of this.seqs.values()) if (s.phase === 'swapping' && s.doneAt <= now) this.settle(s);
    for (const s of this.pending.startIteration()) {
      stall = Math.max(stall, s.doneAt - now);
      this.settle(s);
    }
    this.pending.dropSettled();
    const input = nodeIterationInput(this.seqs.values(), this.kv, {
      maxBatch: this.c.maxBatch,
      maxPrefillTokens: this.c.maxPrefillTokens,
      kvAvailable: { [POOL]: this.mgr.numAvailable },
      ranker: this.ranker,
    });
    const plan = planNodeIteration({ ...input, kvAvailable: input.kvAvailable ?? {} }, true);
    if (plan.prefill.length === 0 && plan.decode.length === 0 && plan.preempt.length === 0) return this.idle(now, stall);

    // Step 3 before 2: a swap-out's blocks are free only once its copy is done (waited for).
    const outMs = this.swapOut(plan.preempt.map((id) => this.seqs.get(id)!));
    stall += outMs;
    const kinds = admissionKinds(plan.prefill.map((id) => this.seqs.get(id)!));
    stall += this.swapIn(kinds.swappedIn, now + stall, plan.decode.length > 0);
    let tokens = 0,
      attended = 0;
    for (const s of [...kinds.fresh, ...kinds.recomputed]) {
      const n = s.preempted ? s.tokens : s.promptTokens;
      s.blocks = this.mgr.allocateFor(s.id, blocksFor(n)) ?? fail(`no blocks to admit ${s.id}`);
      s.tokens = n;
      s.phase = 'running';
      // Prefill with prefix: the copy's tokens come in over the link; the new ones attend over them.
      const prefix = s.preempted ? 0 : this.prefix.restore(s);
      s.preempted = false;
      tokens += n - prefix;
      attended += (n * (n + 1) - prefix * (prefix + 1)) / 2;
    }
    stall += this.prefixSwapIn(now + stall);
    let context = 0;
    for (const id of plan.decode) {
      const s = this.seqs.get(id)!;
      if (s.tokens % BLOCK_TOKENS === 0) s.blocks.push(...(this.mgr.allocateFor(s.id, 1) ?? fail(`no block to decode ${s.id}`)));
      context += s.tokens;
    }
    const prefills = kinds.fresh.length + kinds.recomputed.length;
    const computeMs = this.c.compute.prefillMs(prefills, tokens, attended) + this.c.compute.decodeMs(plan.decode.length, context);
    const end = now + stall + computeMs;
    this.out.switchStallMs += stall;
    this.out.computeMs += computeMs;
    this.policy.recordIteration(stall + computeMs);

    for (const s of [...kinds.fresh, ...kinds.recomputed]) if (!s.generated) this.emit(s, end);
    for (const id of plan.decode) {
      const s = this.seqs.get(id)!;
      s.tokens++;
      this.emit(s, end);
    }
    this.tick(plan, kinds.fresh);
    this.q.at(
      end,
      call((t) => this.step(t)),
    );
  }

  /** Nothing to plan: wait for the oldest asynchronous swap-in, else sleep until an arrival. */
  private idle(now: number, stall: number): void {
    this.out.switchStallMs += stall;
    const oldest = this.pending.oldest();
    if (oldest) {
      this.out.switchStallMs += Math.max(0, oldest.doneAt - now - stall);
      this.q.at(
        Math.max(now + stall, oldest.doneAt),
        call((t) => this.step(t)),
      );
      return;
    }
    if (stall > 0) {
      this.q.at(
        now + stall,
        call((t) => this.step(t)),
      );
      return;
    }
    this.busy = false;
  }

  /** A token for `s` at `at`: its first is its TTFT, each later one a TBT; the last finishes it. */
  private emit(s: Seq, at: number): void {
    if (s.generated === 0) this.out.ttftMs.push(at - s.arrivalMs);
    else this.out.tbtMs.push(at - s.lastTokenMs);
    s.lastTokenMs = at;
    if (++s.generated < s.reply) return;
    const conv = this.conversations[s.conv]!;
    if (this.c.prefixKept && s.turn + 1 < conv.turns.length) this.prefix.keep(s);
    this.mgr.release(s.blocks);
    this.mgr.closeGroup(s.id);
    this.seqs.delete(s.id);
    this.ranker.forget(s.id);
    this.history[s.conv] = s.promptTokens + s.reply;
    if (!this.c.mechanisms.reuse && !this.c.prefixKept) this.host.drop(s.conv);
    if (s.turn + 1 < conv.turns.length)
      this.q.at(
        at + conv.turns[s.turn]!.thinkMs,
        call((t) => this.arrive(s.conv, s.turn + 1, t)),
      );
    else {
      this.host.drop(s.conv);
      this.c.trace.forget(s.conv);
    }
  }

  /** Swaps the preempted sequences out in one synchronous batch; those the host has no room for are recomputed later. */
  private swapOut(seqs: readonly Seq[]): number {
    let calls = 0,
      bytes = 0,
      allCalls = 0,
      allBytes = 0;
    for (const s of seqs) {
      const held = this.c.mechanisms.reuse ? this.host.get(s.conv) : undefined;
      const from = reusedSwapBlocks(held, s.tokens);
      if (this.host.makeRoom(s.conv, s.blocks.length, () => this.swappedOutConversations())) {
        const n = this.calls(s.blocks, from);
        calls += n;
        bytes += (s.blocks.length - from) * this.blockBytes;
        // What a traditional swap-out of the same sequence would copy: every block (Table 1's comparison).
        const all = from === 0 ? n : this.calls(s.blocks, 0);
        allCalls += all;
        allBytes += s.blocks.length * this.blockBytes;
        this.out.traditionalSwapOutBlocks += s.blocks.length;
        this.out.swapOuts++;
        this.out.swapOutBlocks += s.blocks.length - from;
        this.out.reusedBlocks += from;
        this.count(s.blocks.length - from, n);
        this.host.record(s.conv, s.tokens);
        s.swapped = true;
      } else {
        this.out.recomputes++;
        s.swapped = false;
      }
      this.mgr.release(s.blocks);
      this.mgr.closeGroup(s.id);
      s.blocks = [];
      s.phase = 'waiting';
      s.preempted = true;
    }
    this.out.swapOutCalls += calls;
    this.out.traditionalSwapOutCalls += allCalls;
    const ms = transferMs(this.c.link, calls, bytes);
    this.out.swapOutMs += ms;
    this.out.traditionalSwapOutMs += transferMs(this.c.link, allCalls, allBytes);
    return ms;
  }

  /** Swaps admitted sequences in: one decision for the batch (as the node's SwapManager makes it); returns the stall. */
  private swapIn(seqs: readonly Seq[], start: number, othersDecode: boolean): number {
    if (seqs.length === 0) return 0;
    let calls = 0,
      bytes = 0,
      blocks = 0;
    for (const s of seqs) {
      s.blocks = this.mgr.allocateFor(s.id, blocksFor(s.tokens)) ?? fail(`no blocks to swap ${s.id} in`);
      const n = this.calls(s.blocks, 0);
      calls += n;
      bytes += s.blocks.length * this.blockBytes;
      blocks += s.blocks.length;
      this.count(s.blocks.length, n);
      // vLLM frees its CPU blocks on swap-in; with reuse the copy stays valid for the next swap-out.
      if (!this.c.mechanisms.reuse) this.host.drop(s.conv);
    }
    this.out.swapIns += seqs.length;
    this.out.swapInBlocks += blocks;
    const ms = transferMs(this.c.link, calls, bytes);
    this.queueH2d(start, ms);
    this.policy.recordSwap(blocks, ms);
    const mode = this.policy.decide(this.c.mechanisms.asyncSwapIn ? 'adaptive' : 'sync', blocks, othersDecode);
    if (mode === 'sync') {
      for (const s of seqs) this.settle(s);
      return this.h2dFreeAt - start;
    }
    this.out.asyncSwapIns += seqs.length;
    for (const s of seqs) {
      s.phase = 'swapping';
      s.doneAt = this.h2dFreeAt;
      this.pending.add(s);
    }
    return 0;
  }

  private settle(s: Seq): void {
    s.phase = 'running';
    s.preempted = false;
    s.swapped = false;
    this.pending.settle(s);
  }

  /** Conversations whose copy a swapped-out (or swapping-in) sequence, or a turn waiting to start from it, still needs. */
  private swappedOutConversations(): Set<number> {
    const swappedOut = new Set<number>();
    for (const s of this.seqs.values()) if (s.swapped || s.phase === 'swapping' || s.prefixTokens > 0) swappedOut.add(s.conv);
    return swappedOut;
  }

  /** This iteration's prefix swap-ins (PrefixTurns), queued on the host → device direction; returns the stall. */
  private prefixSwapIn(start: number): number {
    const copy = this.prefix.takeSwapIn();
    if (!copy) return 0;
    this.policy.recordSwap(copy.blocks, copy.ms);
    return this.queueH2d(start, copy.ms) - start;
  }

  /** A host → device copy of `ms` asked for at `start` runs after those before it; returns when it ends. */
  private queueH2d(start: number, ms: number): number {
    this.h2dFreeAt = Math.max(start, this.h2dFreeAt) + ms;
    return this.h2dFreeAt;
  }

  private count(blocks: number, calls: number): void {
    if (!this.c.mechanisms.groups || calls === 0) return;
    this.out.groupedBlocks += blocks;
    this.out.groupedCalls += calls;
  }

  private get granularity(): 'grouped' | 'per-block' {
    return this.c.mechanisms.groups ? 'grouped' : 'per-block';
  }

  /** Copy calls that move logical blocks `[from, blocks.length)`: one per run, per run and layer half, or per block and layer half. */
  private calls(blocks: readonly number[], from: number): number {
    const n = countSwapRanges(blocks, from, this.c.segmentBlocks, this.c.model.layers, this.granularity);
    return this.c.mechanisms.groups && this.c.mechanisms.perLayerRuns ? n * 2 * this.c.model.layers : n;
  }

  /** The ranker's bookkeeping, with the trace's levels as the API priorities at each update. */
  private tick(plan: { decode: string[]; prefill: string[]; preempt: string[] }, fresh: readonly Seq[]): void {
    this.iteration++;
    if (this.iteration % this.c.updateEvery === 0) {
      const update = this.iteration / this.c.updateEvery;
      for (const s of this.seqs.values()) s.priority = this.c.trace.level(s.conv, update);
    }
    tickRanker(this.ranker, plan, fresh, this.seqs.values());
  }
}

function fail(msg: string): never {
  throw new Error(`swap twin: ${msg} (the plan promised the blocks)`);
}
