export * from './stream-continuation.js';
export * from './node-incarnation.js';
export * from './redispatch-backoff.js';
