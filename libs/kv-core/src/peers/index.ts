export * from './peer-source.policy.js';
export { planPrefetchPulls, prefetchExpiry, type PrefetchPull } from './prefetch.planner.js';
