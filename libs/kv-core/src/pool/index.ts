export { TIERS_FASTEST_FIRST, tierIndex, type PoolTier, type SegmentLocation, type SegmentRef, type Extent } from './pool.types.js';
export { segmentBytes, chunkBytes, alignUp, segmentStride, segmentsFitting, type KvGeometry } from './segment.sizing.js';
export {
  placementRatios,
  targetCounts,
  placeCounts,
  interleave,
  placeSegments,
  type PlacementDevice,
  type SegmentPlacement,
} from './placement.policy.js';
export { ExtentAllocator, type ExtentAllocatorStats } from './extent.allocator.js';
export { planOffload, type OffloadDevice, type DeviceWrite, type OffloadPlan } from './offload.planner.js';
export { splitWrites } from './write.split.js';
export { WriteBehindQueue, type WriteBehindCost } from './write-behind.queue.js';
export {
  HoldingChangeBatch,
  TierHoldings,
  leadingLayers,
  removalChanges,
  type HoldingChange,
  type HoldingTier,
} from './holding.changes.js';
export * from './eviction.order.js';
export { LookupTable } from './lookup.table.js';
export type { LookupTableOptions, Removal, Victim, PrefixChunk, PinHandle, EvictionOptions } from './lookup.types.js';
export { crc32c } from './crc32c.checksum.js';
export {
  JOURNAL_MAGIC,
  JOURNAL_VERSION,
  MAX_TOUCH_KEYS,
  encodeRecord,
  encodeRecords,
  decodeJournal,
  journalFileName,
  type JournalRecord,
  type JournalHeader,
  type JournalPut,
  type JournalRemove,
  type JournalTouch,
  type JournalEnd,
  type DecodedJournal,
} from './journal.codec.js';
export {
  replayJournal,
  compactJournal,
  putRecord,
  emptyJournal,
  journalReplayable,
  type ReplayReport,
  type ReplayDropReason,
} from './journal.replay.js';
export { JournalBacklog, JOURNAL_RETRY_FIRST_MS, JOURNAL_RETRY_MAX_MS, type JournalHealth } from './journal.backlog.js';
export { OrderedSet, type Comparator } from './ordered.set.js';
export {
  restoreReach,
  restoreTouchKeys,
  restoreTier,
  inHost,
  worthWarming,
  hostResidentPrefix,
  restoredTokensByTier,
  chunksCovering,
  type RestorePrompt,
  type RestoreReach,
} from './restore.planner.js';
export {
  RestoreReadSchedule,
  READ_AHEAD_BYTES,
  SLOW_START_GROUPS,
  COPY_AHEAD_LAYERS,
  type RestoreReadOptions,
} from './restore-read.schedule.js';
export {
  PrefetchedChunks,
  importedChunks,
  withdrawnChunks,
  type PrefetchAdvisory,
  type Drop,
  type ImportedChunk,
  type Withdrawal,
} from './prefetched.chunks.js';
