import {
  HOST_FIRST_PART_SEGMENTS,
  HOST_PART_SEGMENTS,
  missingSegments,
  PayloadUse,
  splitWrites,
  SSD_BATCH_SEGMENTS,
  SSD_BATCHES_IN_FLIGHT,
  ssdCommitDue,
  ssdWritesToDo,
  WriteBehindQueue,
  type ChunkPayload,
  type DeviceWrite,
  type PinHandle,
  type SegmentLocation,
  type SegmentRef,
} from '@mnemo/kv-core';
import { allocHostBuffer, transfer, transferOperands, type TransferOperand } from '@mnemo/native-cuda';
import type { ModelKv, OffloadTiers } from './offload.tiers.js';

export type { ChunkPayload } from '@mnemo/kv-core';

/** For same-process A/Bs only (the tiers bench): the previous behaviour of the SSD write-behind. */
export interface TierWriterTuning {
  /** SSD batches written at once (default SSD_BATCHES_IN_FLIGHT). */
  readonly ssdBatchesInFlight?: number;
  /** Checksum SSD copies of host replicas again instead of taking the recorded CRC32C. */
  readonly recomputeSsdCrc?: boolean;
  /** Segments per part of a host write-through (default HOST_PART_SEGMENTS; 0: one part). */
  readonly hostPartSegments?: number;
  /** Segments of a write-through's first part (default HOST_FIRST_PART_SEGMENTS). */
  readonly hostFirstPartSegments?: number;
  /** Commit whenever the write-behind queue runs dry, even between the parts of one write-through. */
  readonly commitBetweenParts?: boolean;
}

/** Where an SSD write reads a segment from: its pinned host replica, or the payload itself. */
type SsdSource =
  | { readonly kind: 'host'; readonly pin: PinHandle }
  | { readonly kind: 'payload'; readonly payload: Float32Array; readonly byteOffset: number; readonly use: PayloadUse };

interface SsdJob {
  readonly m: ModelKv;
  readonly seg: SegmentRef;
  readonly source: SsdSource;
  /** The write() it came from: one batch never mixes two, so a newer one can evict an older. */
  readonly origin: number;
}

/** Default bound of the write-behind queue (NODE_KV_SSD_QUEUE_MB). */
export const DEFAULT_SSD_QUEUE_BYTES = 256 * 1024 * 1024;

/**
 * Write-through of whole chunks: to the host pool at once (one native transfer per batch,
 * bandwidth-proportional across host devices, CRC32C taken while copying), then in the
 * background to the SSD pool (the slowest tier, which keeps a complete copy), batched into few
 * large O_DIRECT writes per device and journaled. A full tier evicts (later layers of the least
 * recently used request first); a chunk no tier has room for is simply not kept — never a
 * stall. The host replica being copied to SSD is pinned, so eviction cannot reuse its space
 * mid-copy.
 *
 * The write-behind queue is bounded in bytes (`maxQueueBytes`): what it holds is host pins
 * (a segment each, which eviction then cannot reclaim) and chunk payloads the host pool had no
 * room for (the whole payload, until its last queued segment is written). A disk slower than
 * the chunks coming in would otherwise grow both without limit. Past the bound a segment is
 * not queued: it stays in the faster tiers only, or — a payload — is not kept at all, and a
 * later request recomputes it (counted in `ssdDropped`). Dropping never stalls the engine's pass,
 * which a blocking queue would.
 */
export class TierWriter {
  private readonly queue: WriteBehindQueue<SsdJob>;
  private pumping?: Promise<void>;
  /** Wakes a pump waiting for the next part of a write-through. */
  private wakePump?: () => void;
  private readonly writes = new Set<Promise<void>>();
  private origins = 0;
  /** Set by {@link stop}: the devices are going away, nothing more is written or reported. */
  private stopped = false;
  /** Segments that found no room in the slowest tier (kept only in faster ones). */
  ssdSkipped = 0;
  /** Segments not queued for SSD because the queue was at its byte bound (kept in faster tiers only, or recomputed later). */
  ssdDropped = 0;

  constructor(
    private readonly tiers: OffloadTiers,
    private readonly onError: (e: unknown, what: string) => void,
    private readonly maxQueueBytes = DEFAULT_SSD_QUEUE_BYTES,
    private readonly tuning: TierWriterTuning = {},
  ) {
    // What a job holds while queued or in flight: its pinned host segment, or the whole payload it is cut from.
    this.queue = new WriteBehindQueue(maxQueueBytes, (j) =>
      j.source.kind === 'host' ? { bytes: j.m.segBytes } : { bytes: j.source.payload.byteLength, shared: j.source.use },
    );
  }

  /** Segments waiting for (or in) an SSD write. */
  get pendingSsd(): number {
    return this.queue.length;
  }

  /** Bytes the write-behind queue holds (never above its bound, but for one job). */
  get pendingSsdBytes(): number {
    return this.queue.bytes;
  }

  /**
   * Writes chunks through: host now (resolves when there), SSD in the background — or, with
   * `hostOnly`, to the host pool alone (copies another node keeps; nothing if the host has no room).
   */
  write(model: string, chunks: readonly ChunkPayload[], hostOnly = false): Promise<void> {
    const uses = chunks.map((c) => new PayloadUse(c));
    if (this.stopped) {
      for (const u of uses) u.drop();
      return Promise.resolve();
    }
    const p = this.writeHost(this.tiers.model(model), chunks, uses, ++this.origins, hostOnly)
      .catch((e) => this.onError(e, 'host write'))
      .finally(() => {
        for (const u of uses) u.drop();
      });
    this.writes.add(p);
    void p.finally(() => this.writes.delete(p));
    return p;
  }

  /**
   * Like a crash (KvStore.abort): queued SSD writes are dropped and writes still running fail
   * quietly once the devices close; what a restart finds is what the journal already names.
   */
  stop(): void {
    this.stopped = true;
    for (const j of this.queue.takeAll()) {
      this.queue.done(j);
      this.release(j);
    }
  }

  /** Resolves once every write accepted so far reached its last tier (tests, shutdown). */
  async drain(): Promise<void> {
    while (this.writes.size > 0 || this.pumping) {
      await Promise.all([...this.writes]);
      await this.pumping;
    }
  }

  private async writeHost(
    m: ModelKv,
    chunks: readonly ChunkPayload[],
    uses: readonly PayloadUse[],
    origin: number,
    hostOnly: boolean,
  ): Promise<void> {
    const segs = missingSegments(m.table, 'mem', { layers: m.geometry.layers, segBytes: m.segBytes }, chunks, uses);
    if (segs.length === 0) return;
    const { writes, unplaced } = this.tiers.place(m, segs, 'mem');
    // No room in host memory even after eviction (or no host tier): straight to the SSD pool.
    if (!hostOnly)
      for (const s of unplaced)
        this.enqueue({ m, seg: s, origin, source: { kind: 'payload', payload: s.payload, byteOffset: s.byteOffset, use: s.use.add() } });
    if (writes.length > 0) {
      // In parts, copied at once: each part's SSD writes start as soon as it lands in host
      // memory, while the copy threads work on the next (the SSD has every segment sooner).
      // (Host-only writes gain nothing from parts.)
      const toSsd = !hostOnly && this.tiers.ssd.length > 0;
      const parts = splitWrites(
        writes,
        toSsd ? (this.tuning.hostPartSegments ?? HOST_PART_SEGMENTS) : 0,
        m.stride,
        this.tuning.hostFirstPartSegments ?? HOST_FIRST_PART_SEGMENTS,
      );
      const done = await Promise.allSettled(
        parts.map(async (part) => {
          const copied = await this.copy(m, part, (s) => ({ operand: s.payload, offset: s.byteOffset }));
          for (const { seg } of this.tiers.putFirst(m, copied, 'mem')) {
            if (hostOnly || this.tiers.ssd.length === 0 || m.table.get(seg.chunkKey, seg.layer, 'ssd')) continue;
            const pin = m.table.pin(seg.chunkKey, seg.layer, 'mem');
            if (pin) this.enqueue({ m, seg, origin, source: { kind: 'host', pin } });
          }
          this.pump();
        }),
      );
      // Every part settled before the payloads may be released (write()'s finally).
      const failed = done.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    }
    this.pump();
  }

  /**
   * One native transfer for a plan: every segment from its source to its planned offset, with
   * the CRC32C of each source segment computed on the way — unless `source` gives the CRC32C
   * already recorded for those bytes (a pinned host replica's): an SSD write then makes no CPU
   * pass over the data, and the copy keeps the checksum taken when the bytes entered the tiers
   * (a host replica corrupted since then is caught on read, not blessed with a fresh CRC).
   * Space is given back if it fails.
   */
  private async copy<S extends SegmentRef>(
    m: ModelKv,
    writes: readonly DeviceWrite<S>[],
    source: (s: S) => { operand: TransferOperand; offset: number; crc32c?: number },
  ): Promise<Array<{ seg: SegmentRef; location: SegmentLocation }>> {
    const { operands, op } = transferOperands();
    const ranges: number[] = [];
    const crcs: number[] = [];
    /** Per segment: its known CRC32C, or undefined when the transfer computes it (in order). */
    const known: Array<number | undefined> = [];
    const out: Array<{ seg: SegmentRef; location: Omit<SegmentLocation, 'crc32c'> }> = [];
    for (const w of writes) {
      const dst = op(this.tiers.device(w.deviceIndex).device);
      w.segments.forEach((s, i) => {
        const src = source(s);
        const so = op(src.operand);
        ranges.push(so, src.offset, dst, w.offsets[i]!, w.type === 'ssd' ? m.ioBytes : m.segBytes);
        known.push(src.crc32c);
        if (src.crc32c === undefined) crcs.push(so, src.offset, m.segBytes);
        out.push({
          seg: { chunkKey: s.chunkKey, position: s.position, layer: s.layer },
          location: { deviceIndex: w.deviceIndex, type: w.type, offset: w.offsets[i]!, length: m.segBytes },
        });
      });
    }
    try {
      const r = await transfer(operands, Float64Array.from(ranges), crcs.length ? { crcs: Float64Array.from(crcs) } : {});
      let next = 0;
      return out.map((o, i) => ({ seg: o.seg, location: { ...o.location, crc32c: known[i] ?? r.crcs[next++]! } }));
    } catch (e) {
      for (const w of writes) for (const x of w.extents) this.tiers.device(w.deviceIndex).allocator.free(x.offset, x.length);
      throw e;
    }
  }

  private enqueue(job: SsdJob): void {
    if (this.tiers.ssd.length === 0 || this.stopped) {
      this.release(job);
      this.ssdSkipped++;
      return;
    }
    if (!this.queue.offer(job)) {
      this.release(job);
      this.ssdDropped++;
    }
  }

  private pump(): void {
    if (this.pumping) {
      this.wakePump?.();
      return;
    }
    this.pumping = (async () => {
      let sinceCommit = 0;
      const running = new Set<Promise<void>>();
      while (!this.stopped) {
        if (this.queue.length === 0) {
          // A write-through still landing in parts queues its next part soon: a commit now would
          // leave the device idle between parts while the pool and journals sync.
          if (this.writes.size === 0 || this.tuning.commitBetweenParts) break;
          await Promise.race([new Promise<void>((r) => (this.wakePump = r)), ...this.writes]);
          this.wakePump = undefined;
          continue;
        }
        const p = this.writeBatch(this.queue.takeBatch(SSD_BATCH_SEGMENTS, (first, next) => next.origin === first.origin));
        running.add(p);
        void p.finally(() => running.delete(p));
        const dry = this.queue.length === 0 && (this.writes.size === 0 || this.tuning.commitBetweenParts === true);
        if (ssdCommitDue(dry, ++sinceCommit)) {
          // A commit names only what landed: the tiers record a batch's replicas once its writes finished.
          await Promise.all(running);
          await this.commit();
          sinceCommit = 0;
        } else if (running.size >= (this.tuning.ssdBatchesInFlight ?? SSD_BATCHES_IN_FLIGHT)) await Promise.race(running);
      }
      await Promise.all(running);
      if (sinceCommit > 0 && !this.stopped) await this.commit();
    })().finally(() => {
      this.pumping = undefined;
      // Jobs queued while the last batch was finishing (none are, once stopped: stop empties the queue).
      if (this.queue.length > 0 && !this.stopped) this.pump();
    });
  }

  /** Syncs the pools and journals; records stay buffered and go with the next flush when it fails, never silently. */
  private async commit(): Promise<void> {
    try {
      await this.tiers.flushJournals();
    } catch (e) {
      if (!this.stopped) this.onError(e, 'journal flush');
    }
  }

  /** One batch of the write-behind queue, per model; never rejects (a failure is reported, its jobs released). */
  private async writeBatch(batch: readonly SsdJob[]): Promise<void> {
    const byModel = new Map<ModelKv, SsdJob[]>();
    for (const j of batch) byModel.set(j.m, [...(byModel.get(j.m) ?? []), j]);
    for (const [m, jobs] of byModel) {
      try {
        await this.writeSsd(m, jobs);
      } catch (e) {
        if (!this.stopped) this.onError(e, 'SSD write');
      } finally {
        for (const j of jobs) {
          this.queue.done(j);
          this.release(j);
        }
      }
    }
  }

  private async writeSsd(m: ModelKv, jobs: readonly SsdJob[]): Promise<void> {
    const segs = ssdWritesToDo(m.table, jobs);
    if (segs.length === 0) return;
    const { writes, unplaced } = this.tiers.place(m, segs, 'ssd');
    this.ssdSkipped += unplaced.length;
    if (writes.length === 0) return;
    const copied = await this.copy(m, writes, (s) => {
      const src = s.job.source;
      if (src.kind === 'host')
        return {
          operand: this.tiers.device(src.pin.location.deviceIndex).device,
          offset: src.pin.location.offset,
          ...(this.tuning.recomputeSsdCrc ? {} : { crc32c: src.pin.location.crc32c }),
        };
      if (m.ioBytes === m.segBytes) return { operand: src.payload, offset: src.byteOffset };
      // O_DIRECT moves whole sectors: pad an odd-sized segment into an aligned buffer first.
      const buf = allocHostBuffer(m.stride);
      new Uint8Array(buf).set(new Uint8Array(src.payload.buffer, src.payload.byteOffset + src.byteOffset, m.segBytes));
      return { operand: buf, offset: 0 };
    });
    this.tiers.putFirst(m, copied, 'ssd');
  }

  private release(job: SsdJob): void {
    if (job.source.kind === 'host') this.tiers.unpin(job.m, [job.source.pin]);
    else job.source.use.drop();
  }
}
