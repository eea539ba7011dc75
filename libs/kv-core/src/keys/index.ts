export { BLOCK_TOKENS, CHUNK_TOKENS, BLOCKS_PER_CHUNK } from './chunk.constants.js';
export { CHUNK_KEY_BYTES, chunkKeys, chunkKeyBytes, nextChunkKey, keyToHex, hexToKey, isChunkKey } from './chunk-key.hasher.js';
export { validateTokenIds } from './token-ids.validator.js';
export { BlockKeyChain, blockKeys, chunkBlockKeys } from './block-key.chain.js';
export { heldChunkPrefix } from './held-prefix.js';
export { tenantOf, tenantLogId } from './tenant.id.js';
