export * from './peer-source.policy.js';
export * from './peer-source.health.js';
export { planPrefetchPulls, prefetchExpiry, type PrefetchPull } from './prefetch.planner.js';
export * from './link.speed.js';
