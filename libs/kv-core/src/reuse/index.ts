export * from './reuse.pattern.js';
