export { BufferPool, BUFFER_POOL_BYTES, type BufferMemory } from './buffer.pool.js';
export { RestoreBuffers, type BufferSource } from './restore.buffers.js';
export { WarmRestores, WARM_TTL_MS, type WarmReader, type After } from './warm.restores.js';
