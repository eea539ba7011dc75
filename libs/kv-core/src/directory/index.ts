export { KvDirectory } from './kv.directory.js';
export {
  DIRECTORY_TIERS,
  type DirectoryTier,
  type DirectoryChange,
  type ChunkHolding,
  type NodePrefix,
  type KvDirectoryStats,
} from './kv-directory.types.js';
export {
  ExpectedHoldings,
  expectedPrompt,
  RECORDED_PROMPT_SCAN_CHUNKS,
  type ExpectedPrompt,
  type ExpectedRecord,
  type RecordedPromptMatch,
  type ExpectedHoldingsStats,
} from './expected-holdings.js';
