export * from './errors/index.js';
export * from './keys/index.js';
export * from './blocks/index.js';
export * from './routing/index.js';
export * from './batching/index.js';
export * from './reuse/index.js';
export * from './layout/index.js';
export * from './pool/index.js';
