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
export { DeviceBlockManager, type DeviceBlockCounts, type BlockEvictionListener } from './device-block.manager.js';
export { KvBlockLedger, type LedgerAppend, type DeviceChunkEvent } from './kv-block.ledger.js';
export { SequenceBlockTable, type AppendPlan, type BlockSource } from './sequence-block-table.js';
