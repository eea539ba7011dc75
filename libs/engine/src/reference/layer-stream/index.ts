export { LayerStreamCache, type LayerStreamOptions, type LayerStreamStats } from './layer-stream.cache.js';
export { DeviceRegionBacking, HostBacking, type LayerKvBacking, type BackingTier } from './layer-kv.backing.js';
export { StreamedSequences, type LayerStreamSettings } from './streamed-sequences.js';
