import type { NodePrefix } from '../directory/kv-directory.types.js';

/**
 * Leading chunks of a node's prefix that are on its device. A restore continues past them from
 * either the node's own tiers or one peer's unbroken run, never both in one pass
 * (choosePeerPrefix), so a peer source must start here to be used at all.
 */
export function deviceChunks(p: NodePrefix | undefined): number {
  let i = 0;
  while (p && i < p.prefixChunks && p.tiers[i] === 'device') i++;
  return i;
}
