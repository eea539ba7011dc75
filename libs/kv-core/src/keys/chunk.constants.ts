/** Tokens per block: the engine's paging unit on the device (ARCHITECTURE §3). */
export const BLOCK_TOKENS = 16;
/** Tokens per chunk: the unit of offload, lookup and transfer. */
export const CHUNK_TOKENS = 256;
/** A chunk is a whole number of blocks so a chunk boundary is always a block boundary. */
export const BLOCKS_PER_CHUNK = CHUNK_TOKENS / BLOCK_TOKENS;
