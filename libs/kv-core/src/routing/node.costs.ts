import type { MeasuredCosts } from './node-load.js';
import type { RoutingCosts } from './route.types.js';

/** A reported figure is used only when it is a finite, non-negative number. */
const usable = (x: number | undefined): x is number => typeof x === 'number' && Number.isFinite(x) && x >= 0;

/**
 * The cost model for one candidate: the scheduler's configured figures, with each one the node
 * measured of itself in their place. Peer fetch stays off (Infinity) where the scheduler turned it off.
 */
export function costsOf(measured: MeasuredCosts | undefined, base: RoutingCosts): RoutingCosts {
  if (!measured) return base;
  const load = measured.loadMsPerChunk ?? {};
  return {
    ...base,
    recomputeMsPerChunk: usable(measured.recomputeMsPerChunk) ? measured.recomputeMsPerChunk : base.recomputeMsPerChunk,
    attentionMsPerChunkPair: usable(measured.attentionMsPerChunkPair) ? measured.attentionMsPerChunkPair : base.attentionMsPerChunkPair,
    loadMsPerChunk: {
      device: base.loadMsPerChunk.device,
      host: usable(load.host) ? load.host : base.loadMsPerChunk.host,
      ssd: usable(load.ssd) ? load.ssd : base.loadMsPerChunk.ssd,
    },
    peerMsPerChunk: Number.isFinite(base.peerMsPerChunk) && usable(measured.peerMsPerChunk) ? measured.peerMsPerChunk : base.peerMsPerChunk,
  };
}
