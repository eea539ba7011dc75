import type { Engine, EngineChunkEvent } from '@mnemo/engine';
import type { HoldingChange } from '@mnemo/kv-core';
import type { StoreLog } from './store.log.js';
import type { OffloadTiers } from './offload.tiers.js';
import type { ChunkPayload, TierWriter } from './tier.writer.js';

/**
 * The device side of the KV store: every chunk the engine completes on the device is reported
 * (a KV event), exported while its sequence still holds the blocks, and written through to the
 * tiers, the chunks of one pass as one batch; evictions from the device are reported too.
 */
export class ChunkExports {
  private readonly exports: Array<{ model: string; chunk: ChunkPayload }> = [];
  private exportScheduled = false;

  constructor(
    private readonly tiers: OffloadTiers,
    private readonly writer: TierWriter,
    private readonly engine: Engine,
    private readonly onChange: (c: HoldingChange) => void,
    private readonly log: StoreLog,
  ) {}

  onDeviceChunk(e: EngineChunkEvent): void {
    if (e.kind === 'evicted') {
      this.onChange({ kind: 'removed', tier: 'device', model: e.model, keys: [e.key] });
      return;
    }
    // A partial chunk leaves the device with its sequence; only whole chunks stay there by name.
    if (e.kind === 'written') this.onChange({ kind: 'stored', tier: 'device', model: e.model, keys: [e.key] });
    if (!this.tiers.has(e.model)) return;
    const m = this.tiers.model(e.model);
    // Partial chunks that a longer prefix of the same chunk now covers: nobody needs them any more.
    this.tiers.dropChunks(m, e.superseded);
    // A chunk a tier already holds whole (one restored from it, most often) is not exported
    // again: the slowest tier has its complete copy, and a restore already promoted it to the
    // host pool where that pool had room. Re-exporting it would cost the pass a copy per chunk.
    if (this.tiers.holdsWhole(m, e.key)) return;
    // Exported now, while the sequence holds the blocks (right after the pass that completed
    // them, or as it lets go of a partial chunk).
    // Into a pooled buffer, handed back once the tiers are done with it: a fresh multi-MiB array
    // would cost this pass's commit (the request's first token waits on it) its page faults.
    const buffer = this.tiers.buffers.take(m.geometry.layers * m.segBytes);
    const release = () => this.tiers.buffers.give(buffer);
    let payload: Float32Array | undefined;
    try {
      const into = new Float32Array(buffer, 0, (m.geometry.layers * m.segBytes) / 4);
      payload = this.engine.exportChunk(e.seqId, e.chunk, e.kind === 'partial' ? e.tokens : undefined, into);
    } catch (err) {
      release();
      // Inside the engine's release or commit: a chunk not kept is a later recompute, never a failed pass.
      this.log('warn', 'KV chunk export failed', { model: e.model, chunk: e.chunk, err: err instanceof Error ? err : String(err) });
      return;
    }
    // An engine that keeps no KV bytes, or wrote them elsewhere: the buffer is not needed.
    const pooled = payload?.buffer === buffer;
    if (!pooled) release();
    if (!payload) return;
    this.exports.push({ model: e.model, chunk: { key: e.key, position: e.chunk, payload, ...(pooled ? { release } : {}) } });
    if (!this.exportScheduled) {
      this.exportScheduled = true;
      // Chunks completed by one pass go to the pool as one batch.
      queueMicrotask(() => this.flush());
    }
  }

  /** Writes the exported chunks through, one batch per model. */
  flush(): void {
    this.exportScheduled = false;
    const byModel = new Map<string, ChunkPayload[]>();
    for (const { model, chunk } of this.exports.splice(0)) byModel.set(model, [...(byModel.get(model) ?? []), chunk]);
    for (const [model, chunks] of byModel) void this.writer.write(model, chunks);
  }
}
