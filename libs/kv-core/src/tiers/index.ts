export { BufferPool, BUFFER_POOL_BYTES, type BufferMemory } from './buffer.pool.js';
export { RestoreBuffers, type BufferSource } from './restore.buffers.js';
export { WarmRestores, WARM_TTL_MS, type WarmReader, type After } from './warm.restores.js';
export {
  TierLedger,
  ModelKv,
  POOL_ALIGNMENT,
  HOST_INDEX_BASE,
  hostPoolLayout,
  journalNeedsCompaction,
  type LedgerDevice,
  type JournalSink,
  type TierChange,
  type TierCounters,
} from './tier.ledger.js';
export {
  PayloadUse,
  HOST_PART_SEGMENTS,
  HOST_FIRST_PART_SEGMENTS,
  SSD_BATCH_SEGMENTS,
  SSD_BATCHES_PER_COMMIT,
  SSD_BATCHES_IN_FLIGHT,
  missingSegments,
  ssdWritesToDo,
  ssdCommitDue,
  type ChunkPayload,
  type PayloadSegment,
} from './chunk.payload.js';
export { PromotionBooks, type PromotedSegment, type PromotionTarget, type PromotionPlan } from './promotion.books.js';
export { RestoreCounters } from './restore.counters.js';
