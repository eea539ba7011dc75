export { KvDirectory } from './kv.directory.js';
export { DIRECTORY_TIERS, type DirectoryTier, type DirectoryChange, type ChunkHolding, type NodePrefix, type KvDirectoryStats } from './kv-directory.types.js';
