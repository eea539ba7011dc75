export { LayerStreamCache, type LayerStreamOptions, type LayerStreamStats } from './layer-stream.cache.js';
export { LentRegionBacking, HostBacking, type LayerKvBacking } from './layer-kv.backing.js';
