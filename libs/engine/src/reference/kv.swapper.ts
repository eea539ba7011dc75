import {
  BLOCK_TOKENS,
  ErrorCode,
  isMnemoError,
  MnemoError,
  planSwapRanges,
  reusedSwapBlocks,
  type SwapGranularity,
  type SwapRange,
} from '@mnemo/kv-core';
import { batchCopy, RANGE_FIELDS } from '@mnemo/native-cuda';
import type { HeldKv, KvSwap, SwapHostCopies, SwapReport } from '../engine.interface.js';
import { KvSwapSpace } from './kv-swap.space.js';
import type { ModelRuntime } from './model.runtime.js';

/** What the swapper needs of a sequence the engine keeps. */
export interface SwappableSeq {
  readonly model: string;
  readonly salt?: string;
  readonly kvTokens: readonly number[];
  preempted: boolean;
  swapped: boolean;
}

export interface SwapOptions {
  readonly granularity: SwapGranularity;
  /** Host bytes for swapped-out KV, per model. */
  readonly hostBytes: number;
  /** Blocks per host segment (a block group's size is a good value). */
  readonly segmentBlocks?: number;
  /** Room kept past each copy for the blocks written before its next swap-out. */
  readonly incrementBlocks?: number;
}

/** Cumulative swap counters. */
export interface SwapStats {
  swapOuts: number;
  swapIns: number;
  bytesOut: number;
  bytesIn: number;
  copies: number;
  /** Blocks a swap-out did not copy because the host copy already held them. */
  reusedBlocks: number;
  /** Blocks a swap-out did not copy because the KV store's host pool keeps them (held). */
  heldBlocks: number;
  /** Sequences whose held KV failed its check at swap-in: they recompute. */
  heldLost: number;
}

type Copy = (buffers: ArrayBuffer[], ranges: Float64Array) => Promise<void>;

/**
 * Swap preemption over the reference engine's paged caches on a host-memory backend (CPU):
 * every copy of one call goes to the native copy workers as one batch (`batchCopy`: the
 * addon's own thread pool, which refuses overlapping ranges as a whole), so a swap is a few
 * group-sized memcpys in parallel — or, as the baseline, `layers · 2` small ones per block.
 * Sequences being copied are marked busy at their runtime, so a release meanwhile is deferred
 * until the copy ends: a block being read or written is never handed to anyone else.
 */
export class KvSwapper implements KvSwap {
  readonly granularity: SwapGranularity;
  /** The copy workers and the CPU backend's kernels share the cores (compute takes all of them while it runs). */
  readonly overlapsCompute = false;
  readonly stats: SwapStats = { swapOuts: 0, swapIns: 0, bytesOut: 0, bytesIn: 0, copies: 0, reusedBlocks: 0, heldBlocks: 0, heldLost: 0 };
  private hostCopies?: SwapHostCopies;
  private readonly spaces = new Map<string, KvSwapSpace>();

  constructor(
    opts: SwapOptions,
    private readonly runtimeOf: (model: string) => ModelRuntime<Float32Array>,
    private readonly seqOf: (seqId: string) => SwappableSeq | undefined,
    private readonly copy: Copy = batchCopy,
  ) {
    this.granularity = opts.granularity;
    this.segmentBlocks = opts.segmentBlocks ?? 64;
    this.incrementBlocks = opts.incrementBlocks ?? (opts.granularity === 'grouped' ? 4 : 0);
    this.hostLimit = opts.hostBytes;
  }

  private readonly segmentBlocks: number;
  private readonly incrementBlocks: number;
  private readonly hostLimit: number;

  /** The model's swap space (each model gets the whole host limit: models are few). */
  private spaceFor(model: string): KvSwapSpace {
    let sp = this.spaces.get(model);
    if (!sp) {
      const c = this.runtimeOf(model).config;
      sp = new KvSwapSpace(c.layers * 2 * BLOCK_TOKENS * c.kvHeads * c.headDim, this.segmentBlocks, this.incrementBlocks, this.hostLimit);
      this.spaces.set(model, sp);
    }
    return sp;
  }

  /**
   * From now on a sequence's first swap-out leaves out the whole chunks `copies` holds (grouped
   * copies only: the per-block baseline stands for vLLM, whose swap space is all it has).
   */
  useHostCopies(copies: SwapHostCopies): void {
    this.hostCopies = copies;
  }

  isSwapped(seqId: string): boolean {
    return this.seqOf(seqId)?.swapped ?? false;
  }

  hostBytes(): number {
    let n = 0;
    for (const sp of this.spaces.values()) n += sp.bytesUsed;
    return n;
  }

  drop(seqId: string, model: string): void {
    this.spaces.get(model)?.drop(seqId);
  }

  async swapOut(seqIds: readonly string[]): Promise<SwapReport> {
    const t0 = performance.now();
    let blocks = 0,
      bytes = 0,
      copies = 0,
      heldBlocks = 0;
    const done: string[] = [];
    for (const [model, ids] of this.byModel(seqIds)) {
      const rt = this.runtimeOf(model);
      const space = this.spaceFor(model);
      const jobs: Array<{ seqId: string; ranges: SwapRange[]; segments: Float32Array[]; tokens: number }> = [];
      for (const seqId of ids) {
        const s = this.seqOf(seqId)!;
        if (s.preempted || rt.isBusy(seqId))
          throw new MnemoError(ErrorCode.Conflict, `sequence ${seqId} is not running idle: cannot swap it out`);
        const physical = rt.cache.ledger.blockIds(seqId);
        const tokens = rt.cache.length(seqId);
        const prev = space.get(seqId);
        // Full blocks of the last copy are unchanged on the device (KV is append-only); its partial tail is not.
        // The per-block baseline copies everything again, into the host memory it already holds (vLLM's
        // preallocated CPU blocks: no allocation cost, no reuse).
        const from = this.granularity === 'grouped' ? reusedSwapBlocks(prev?.tokens, tokens) : 0;
        const held = prev ? undefined : this.hold(s, tokens);
        const copy = space.reserve(seqId, physical.length, held && { kv: held, blocks: held.until / BLOCK_TOKENS });
        if (!copy) {
          held?.release();
          continue;
        }
        const start = Math.max(from, copy.base);
        this.stats.reusedBlocks += Math.max(0, from - copy.base);
        this.stats.heldBlocks += copy.base;
        heldBlocks += copy.base;
        const ranges = this.rangesOf(rt, space, physical, copy.base, start);
        jobs.push({ seqId, ranges, segments: copy.segments, tokens });
        blocks += physical.length - start;
      }
      if (jobs.length === 0) continue;
      const moved = await this.run(rt, jobs, 'out', space.blockElems);
      bytes += moved.bytes;
      copies += moved.copies;
      for (const j of jobs) {
        const s = this.seqOf(j.seqId);
        if (!s) continue;
        space.get(j.seqId)!.tokens = j.tokens;
        rt.release(j.seqId);
        rt.cache.open(j.seqId, s.salt);
        s.preempted = s.swapped = true;
        done.push(j.seqId);
      }
    }
    this.stats.swapOuts += done.length;
    this.stats.bytesOut += bytes;
    this.stats.copies += copies;
    return { seqIds: done, blocks, bytes, copies, ms: performance.now() - t0, heldBlocks };
  }

  async swapIn(seqIds: readonly string[]): Promise<SwapReport> {
    const t0 = performance.now();
    let blocks = 0,
      bytes = 0,
      copies = 0;
    const done: string[] = [];
    for (const [model, ids] of this.byModel(seqIds)) {
      const rt = this.runtimeOf(model);
      const space = this.spaceFor(model);
      const jobs: Array<{ seqId: string; ranges: SwapRange[]; segments: Float32Array[]; tokens: number; held?: HeldLoad }> = [];
      try {
        for (const seqId of ids) {
          const s = this.seqOf(seqId)!;
          const copy = space.get(seqId);
          if (!s.swapped || !copy) throw new MnemoError(ErrorCode.InvalidRequest, `sequence ${seqId} is not swapped out`);
          // Device prefix-cache hits hold the same KV (same keys): attach them, copy the rest.
          const hit = s.salt === undefined ? 0 : rt.cache.attachPrefix(seqId, s.kvTokens);
          const rest = s.kvTokens.slice(hit);
          rt.cache.appendAll([{ seqId, tokens: rest.length, ids: s.salt === undefined ? undefined : rest }]);
          const physical = rt.cache.ledger.blockIds(seqId);
          const start = Math.max(hit / BLOCK_TOKENS, copy.base);
          const ranges = this.rangesOf(rt, space, physical, copy.base, start);
          const held = copy.held && hit < copy.held.until ? { kv: copy.held, from: hit } : undefined;
          jobs.push({ seqId, ranges, segments: copy.segments, tokens: s.kvTokens.length, ...(held ? { held } : {}) });
          blocks += physical.length - hit / BLOCK_TOKENS;
        }
      } catch (e) {
        // Out of blocks (a plan miss) or a bad id: give back what this call attached; all stay swapped.
        for (const seqId of ids) if (this.seqOf(seqId)?.swapped) this.reopen(rt, seqId);
        throw e;
      }
      const moved = await this.run(rt, jobs, 'in', space.blockElems);
      bytes += moved.bytes;
      copies += moved.copies;
      for (const j of jobs) {
        const s = this.seqOf(j.seqId);
        if (!s) continue;
        if (moved.lost.has(j.seqId)) {
          // Its held KV failed its check: never used. It gives its blocks back and recomputes.
          this.reopen(rt, j.seqId);
          space.drop(j.seqId);
          s.swapped = false;
          this.stats.heldLost++;
          continue;
        }
        rt.cache.commit([j.seqId]);
        s.preempted = s.swapped = false;
        done.push(j.seqId);
      }
    }
    this.stats.swapIns += done.length;
    this.stats.bytesIn += bytes;
    this.stats.copies += copies;
    return { seqIds: done, blocks, bytes, copies, ms: performance.now() - t0 };
  }

  /**
   * Issues one batch of copies for the jobs (and the loads of their held KV), their sequences
   * busy (releases deferred) until it ends. `lost`: sequences whose held KV failed its check.
   */
  private async run(
    rt: ModelRuntime<Float32Array>,
    jobs: ReadonlyArray<{ seqId: string; ranges: readonly SwapRange[]; segments: readonly Float32Array[]; held?: HeldLoad }>,
    dir: 'in' | 'out',
    blockElems: number,
  ): Promise<{ bytes: number; copies: number; lost: Set<string> }> {
    const tensor = rt.cache.tensor;
    const buffers: ArrayBuffer[] = [tensor.buffer as ArrayBuffer];
    const index = new Map<ArrayBuffer, number>([[tensor.buffer as ArrayBuffer, 0]]);
    const n = jobs.reduce((k, j) => k + j.ranges.length, 0);
    const packed = new Float64Array(n * RANGE_FIELDS);
    let i = 0,
      bytes = 0;
    for (const j of jobs) {
      for (const r of j.ranges) {
        const seg = j.segments[r.segment]!;
        let h = index.get(seg.buffer as ArrayBuffer);
        if (h === undefined) index.set(seg.buffer as ArrayBuffer, (h = buffers.push(seg.buffer as ArrayBuffer) - 1));
        const dev = tensor.byteOffset + (r.deviceBlock * blockElems + r.offset) * 4;
        const host = seg.byteOffset + (r.segmentBlock * blockElems + r.offset) * 4;
        packed.set(dir === 'out' ? [0, dev, h, host, r.length * 4] : [h, host, 0, dev, r.length * 4], i);
        i += RANGE_FIELDS;
        bytes += r.length * 4;
      }
    }
    const ids = jobs.map((j) => j.seqId);
    const lost = new Set<string>();
    rt.enter(ids);
    let failed: { e: unknown } | undefined;
    try {
      // Held KV loads beside the copies; both settle before the sequences leave the busy set,
      // whichever fails.
      const held = Promise.allSettled(
        jobs.map(async (j) => {
          if (!j.held) return;
          const moved = await this.loadHeld(rt, j.seqId, j.held).catch((e: unknown) => {
            if (!isMnemoError(e) || e.code !== ErrorCode.DataLoss) throw e;
            lost.add(j.seqId);
            return 0;
          });
          bytes += moved;
        }),
      );
      let copies: PromiseSettledResult<void>[];
      if (this.granularity === 'grouped') {
        copies = await Promise.allSettled(n > 0 ? [this.copy(buffers, packed)] : []);
      } else {
        // The baseline as vLLM runs it: one swap call per layer and K/V, each walking every block.
        // vLLM queues every layer's copies on one stream and synchronises once, so the calls are
        // all issued before any is awaited: awaiting each in turn would add a round trip per layer
        // that vLLM does not pay.
        copies = await Promise.allSettled(
          partsOf(
            jobs.flatMap((j) => j.ranges),
            packed,
          ).map((part) => this.copy(buffers, part)),
        );
      }
      const bad = [...copies, ...(await held)].find((c): c is PromiseRejectedResult => c.status === 'rejected');
      if (bad) throw bad.reason;
    } catch (e) {
      failed = { e };
    } finally {
      rt.leave(ids);
    }
    if (failed) {
      // A failed swap-out leaves the device KV as it was (the host bytes are not trusted); a failed swap-in stays swapped out.
      if (dir === 'out') for (const id of ids) this.spaces.get(rt.config.id)?.drop(id);
      else for (const id of ids) if (this.seqOf(id)) this.reopen(rt, id);
      throw failed.e;
    }
    return { bytes, copies: n, lost };
  }

  /** The sequence's held KV past `from` copied into its blocks, layers side by side; returns the bytes copied. */
  private async loadHeld(rt: ModelRuntime<Float32Array>, seqId: string, held: HeldLoad): Promise<number> {
    const { kv, from } = held;
    const slots = rt.cache.slots(seqId, 0, kv.until);
    // Every layer settles before this returns, failed or not: no copy may still be writing into
    // blocks the caller then gives back.
    const loads = await Promise.allSettled(
      Array.from({ length: rt.config.layers }, async (_, layer) => {
        const target = rt.cache.hostTarget(slots, layer);
        if (!target) throw new MnemoError(ErrorCode.Internal, 'held KV needs a cache in host memory');
        // Rows the device prefix cache attached are shared blocks: left alone.
        target.kOffsets.fill(-1, 0, from);
        target.vOffsets.fill(-1, 0, from);
        return kv.loadInto(layer, target);
      }),
    );
    const failed = loads.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    return (kv.until - from) * 2 * rt.config.layers * rt.config.kvHeads * rt.config.headDim * 4;
  }

  /** The whole chunks host memory keeps of a sequence about to be copied out for the first time. */
  private hold(s: SwappableSeq, tokens: number): HeldKv | undefined {
    if (!this.hostCopies || this.granularity !== 'grouped' || s.salt === undefined) return undefined;
    const held = this.hostCopies.hold(s.model, s.salt, s.kvTokens.slice(0, tokens));
    if (!held) return undefined;
    if (held.until <= 0 || held.until > tokens || held.until % BLOCK_TOKENS !== 0) {
      held.release();
      throw new MnemoError(ErrorCode.Internal, `held KV of ${held.until} tokens for a sequence of ${tokens}`);
    }
    return held;
  }

  /** Empties a sequence's device side again (it stays swapped out, its host copy intact). */
  /**
   * Copy ranges of a sequence's blocks from `start` on; `physical` is its block table, and blocks
   * before `base` are not in the swap copy (host memory outside it keeps them).
   */
  private rangesOf(
    rt: ModelRuntime<Float32Array>,
    space: KvSwapSpace,
    physical: readonly number[],
    base: number,
    start: number,
  ): SwapRange[] {
    return planSwapRanges(physical.slice(base), start - base, space.segmentBlocks, space.blockElems, rt.config.layers, this.granularity);
  }

  private reopen(rt: ModelRuntime<Float32Array>, seqId: string): void {
    if (rt.isBusy(seqId)) return;
    rt.release(seqId);
    rt.cache.open(seqId, this.seqOf(seqId)!.salt);
  }

  private byModel(seqIds: readonly string[]): Map<string, string[]> {
    const out = new Map<string, string[]>();
    for (const id of seqIds) {
      const s = this.seqOf(id);
      if (!s) throw new MnemoError(ErrorCode.NotFound, `unknown sequence ${id}`);
      out.set(s.model, [...(out.get(s.model) ?? []), id]);
    }
    return out;
  }
}

/** A swap-in's load of held KV: positions [from, held.until) (the device prefix cache attached those before). */
interface HeldLoad {
  readonly kv: HeldKv;
  readonly from: number;
}

/** The packed ranges split by their offset inside a block (one layer's K or V each), in range order. */
function partsOf(ranges: readonly SwapRange[], packed: Float64Array): Float64Array[] {
  const byOffset = new Map<number, number[]>();
  ranges.forEach((r, i) => {
    const list = byOffset.get(r.offset);
    if (list) list.push(i);
    else byOffset.set(r.offset, [i]);
  });
  return [...byOffset.values()].map((idx) => {
    const out = new Float64Array(idx.length * RANGE_FIELDS);
    idx.forEach((i, k) => out.set(packed.subarray(i * RANGE_FIELDS, (i + 1) * RANGE_FIELDS), k * RANGE_FIELDS));
    return out;
  });
}
