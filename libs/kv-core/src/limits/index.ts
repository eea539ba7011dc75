export * from './tenant.rate-limiter.js';
