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
export { BlockAllocator } from './block-allocator.js';
export { SequenceBlockTable, type AppendPlan } from './sequence-block-table.js';
