export {
  vllmBlockHash,
  VLLM_BLOCK_TOKENS,
  VLLM_MEDIUM,
  tierOfMedium,
  isTilingBlockSize,
  vllmChunkBlocks,
  type VllmChunkBlocks,
} from './vllm-block.mapping.js';
export { VllmBlockFolder, type ExternalBlocksStored, type FoldResult } from './vllm-block.folder.js';
export { indexerQuery, type IndexerHit, type KeyHolding } from './indexer.query.js';
