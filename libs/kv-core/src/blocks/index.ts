export {
  blocksFor,
  chunksFor,
  completeChunks,
  blockTokenRange,
  chunkTokenRange,
  chunkBlockRange,
  blockPosition,
  slotOf,
  slotMapping,
  type Range,
  type BlockPosition,
} from './block.math.js';
export {
  DeviceBlockManager,
  type DeviceBlockCounts,
  type BlockEvictionListener,
  type BlockGroupOptions,
  type StagedPurgeListener,
} from './device-block.manager.js';
export { StagedChunkSet, type StageRank } from './staged-chunk.set.js';
export { FreeRunIndex } from './free-run.index.js';
export { KvBlockLedger, type LedgerAppend, type DeviceChunkEvent, type ChunkContent, type StagingCounters } from './kv-block.ledger.js';
export { SequenceBlockTable, type AppendPlan, type BlockSource } from './sequence-block-table.js';
export { planSwapRanges, countSwapRanges, reusedSwapBlocks, type SwapRange, type SwapGranularity } from './swap.ranges.js';
