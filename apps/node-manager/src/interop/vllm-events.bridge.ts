import { VLLM_MEDIUM, vllmChunkBlocks, type HoldingChange, type VllmChunkBlocks } from '@mnemo/kv-core';
import type { EngineChunkEvent } from '@mnemo/engine';
import type { VllmEventBatch, VllmKvEvent } from '@mnemo/service-kit';

/** Where batches go (the ZMQ publisher in production, a list in tests). */
export interface VllmBatchSink {
  publish(batch: VllmEventBatch): void;
}

export interface VllmBridgeCounters {
  events: number;
  /**
   * Changes to chunks whose tokens this node never saw on its device (a journal replayed after a restart, a chunk pulled from a peer): not
   * describable as vLLM blocks.
   */
  unmapped: number;
}

const MEDIUM: Readonly<Record<HoldingChange['tier'], string>> = {
  device: VLLM_MEDIUM.device,
  mem: VLLM_MEDIUM.host,
  ssd: VLLM_MEDIUM.ssd,
};

/**
 * This node's KV events in vLLM's format, beside the NATS ones: every change to what a tier
 * holds (`HoldingChange`) becomes a BlockStored or BlockRemoved of that chunk's 16-token blocks
 * (kv-core's vllm-block.mapping explains the mapping), with `medium` GPU, CPU or DISK for the
 * device, host and SSD tiers. A chunk is describable once the engine reported it (its tokens and
 * the chunk before it); changes are collected for `periodMs` and sent as one EventBatch, so the
 * device report of a chunk and its description arrive in either order within a period.
 */
export class VllmEventsBridge {
  private readonly chunks = new Map<string, VllmChunkBlocks>();
  private pending: HoldingChange[] = [];
  private timer?: NodeJS.Timeout;
  readonly counters: VllmBridgeCounters = { events: 0, unmapped: 0 };

  constructor(
    private readonly sink: VllmBatchSink,
    private readonly served: ReadonlySet<string>,
    private readonly maxChunks: number,
    private readonly periodMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Engine chunk events: what each written or partial chunk holds. */
  onChunk(e: EngineChunkEvent): void {
    if (e.kind === 'evicted' || !e.ids || e.parentKey === undefined) return;
    const blocks = vllmChunkBlocks([...e.superseded, e.key], e.parentKey, e.ids);
    if (!blocks) return;
    this.chunks.delete(e.key);
    this.chunks.set(e.key, blocks);
    if (this.chunks.size > this.maxChunks) this.chunks.delete(this.chunks.keys().next().value!);
  }

  /** Every change the NATS KV events carry (E-cache models and other tier-only models are left out). */
  onChange(c: HoldingChange): void {
    if (!this.served.has(c.model) || c.keys.length === 0) return;
    this.pending.push(c);
    this.timer ??= setTimeout(() => this.flush(), this.periodMs).unref();
  }

  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const events: VllmKvEvent[] = [];
    for (const c of this.pending.splice(0)) {
      for (const key of c.keys) {
        const b = this.chunks.get(key);
        if (!b) {
          this.counters.unmapped++;
          continue;
        }
        events.push(
          c.kind === 'stored'
            ? {
                type: 'BlockStored',
                blockHashes: b.blockHashes,
                parentBlockHash: b.parentBlockHash,
                tokenIds: b.tokenIds,
                blockSize: 16,
                loraId: null,
                medium: MEDIUM[c.tier],
                loraName: null,
              }
            : { type: 'BlockRemoved', blockHashes: b.blockHashes, medium: MEDIUM[c.tier] },
        );
      }
    }
    if (events.length === 0) return;
    this.counters.events += events.length;
    this.sink.publish({ ts: this.now() / 1000, events });
  }

  close(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
