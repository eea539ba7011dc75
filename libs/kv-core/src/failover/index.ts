export * from './stream-continuation.js';
export * from './node-incarnation.js';
