// The physical limits the tiers bench holds the store's tiers against, each measured like the
// thing it bounds, and the paired fractions computed from them:
//   memcpy for a host get: the same bytes copied on the same copy threads in the same pieces (one
//     transfer per layer of all the chunks) into a ring of three layer-sized buffers, as the
//     restore's reused payloads are; for a host put: one copy of all the bytes into distinct
//     memory, as the write-through is one transfer into the host pool. The limit is the fastest
//     of glibc memcpy, the AVX2 copy kernel and the folded CRC32C copy in that pass.
//   raw O_DIRECT read and write: a file beside the pool, through the same backend and worker as
//     the pool, at the pool's request size (one segment) and queue depth (SSD_QUEUE_DEPTH).
// A round measures each tier and its limit back to back, in alternating order, and a fraction
// is the median of the per-round ratios (limit seconds ÷ tier seconds); a fraction above
// MAX_FRACTION means the limit was not measured in the tier's conditions: a measurement error.
import { probeDirectIo, probeMemcpy } from '@mnemo/native-cuda';
import { median, round } from '@mnemo/testkit';

/** Above this, a fraction of a limit is a measurement error (the limit is not one). */
export const MAX_FRACTION = 1.05;

const fastest = (m) => Math.min(m.memcpySeconds[0], m.kernelSeconds[0], m.crcCopySeconds[0]);

/**
 * Limit probes shaped like the tiers' own traffic.
 * @param {{ bytes: number, layerBytes: number, segmentBytes: number, queueDepth: number, rawPath: string, backend?: 'auto' | 'pread' }} o
 */
export async function tierLimits(o) {
  const raw = (mode) =>
    probeDirectIo({ path: o.rawPath, bytes: o.bytes, blockBytes: o.segmentBytes, queueDepth: o.queueDepth, mode, backend: o.backend });
  await raw('write'); // a read probe needs written blocks
  return {
    /** Seconds for a host get's copies; also the checksumming copies' own times (an A/B). */
    memcpyGet: async () => {
      const m = await probeMemcpy(o.bytes, 1, { pieceBytes: o.layerBytes, dstRingPieces: 3 });
      return { seconds: fastest(m), crcCopy: m.crcCopySeconds[0], crcStreamsCopy: m.crcStreamsCopySeconds[0] };
    },
    /** Seconds for a host put's one copy of everything. */
    memcpyPut: async () => fastest(await probeMemcpy(o.bytes, 1)),
    rawRead: async () => (await raw('read')).seconds,
    rawWrite: async () => (await raw('write')).seconds,
  };
}

/** Runs `limit` and `tier` back to back, the limit first in even rounds; returns both results. */
export async function paired(round, limit, tier) {
  if (round % 2 === 0) {
    const l = await limit();
    return { limit: l, tier: await tier() };
  }
  const t = await tier();
  return { limit: await limit(), tier: t };
}

/**
 * Fractions of the limits from paired rounds: `pairs` maps a fraction's name to
 * [limit seconds per round, tier seconds per round]. Each fraction is the median of the
 * per-round ratios, which are kept; any above MAX_FRACTION is listed in `errors`.
 * @param {Record<string, [number[], number[]]>} pairs
 */
export function pairedFractions(pairs) {
  const fractions = {};
  const perRound = {};
  const errors = [];
  for (const [name, [limit, tier]] of Object.entries(pairs)) {
    if (limit.length !== tier.length || limit.length === 0) throw new Error(`${name}: ${limit.length} limits for ${tier.length} rounds`);
    const ratios = limit.map((l, i) => l / tier[i]);
    fractions[name] = round(median(ratios), 3);
    perRound[name] = ratios.map((x) => round(x, 3));
    if (fractions[name] > MAX_FRACTION)
      errors.push(`${name} = ${fractions[name]} > ${MAX_FRACTION}: the limit was not measured in the tier's conditions`);
  }
  return { fractions, perRound, errors };
}
