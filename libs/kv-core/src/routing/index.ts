export type { NodeLoad } from './node-load.js';
export { KV_USAGE_WEIGHT, loadScore, pickLeastLoaded, expiredNodes } from './least-loaded.policy.js';
