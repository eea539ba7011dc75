/** A pool device as placement sees it. */
export interface PlacementDevice {
  /** Measured or configured bandwidth, any unit as long as all devices use the same one. */
  readonly bandwidth: number;
  /** Segments the device can still take; omitted means unbounded, 0 means full. */
  readonly room?: number;
}

/** Per-device offload sets for one batch, aligned with the input device list. */
export interface SegmentPlacement<S> {
  readonly sets: S[][];
  readonly counts: number[];
  /** The tail of the input that no device had room for (the latest layers of the batch). */
  readonly unplaced: S[];
}

function assertBandwidths(bandwidths: readonly number[]): void {
  bandwidths.forEach((b, i) => {
    if (!Number.isFinite(b) || b < 0) throw new RangeError(`bandwidth of device ${i} must be finite and ≥ 0, got ${b}`);
  });
}

function assertCount(name: string, n: number): void {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`${name} must be a non-negative integer, got ${n}`);
}

/** Unified KV pooling Eq. 1: `p_i = b_i / Σ_j b_j`. All zeros when no device has bandwidth. */
export function placementRatios(bandwidths: readonly number[]): number[] {
  assertBandwidths(bandwidths);
  const total = bandwidths.reduce((s, b) => s + b, 0);
  return bandwidths.map((b) => (total > 0 ? b / total : 0));
}

/**
 * Unified KV pooling Eq. 2: `⌊p_i · n⌋` each, then the remainder one apiece to the devices
 * with the largest `p_i` (ties to the lower device index), so the counts sum to `n`. A device
 * with zero bandwidth gets nothing; if no device has bandwidth every count is 0.
 *
 * NOTE: Algorithm 1 line 10 read literally gives the whole remainder to the single largest
 * device; the text says "the devices with larger p_i", which is what this does. The
 * remainder is below the number of devices with bandwidth, so each gets at most one extra.
 */
export function targetCounts(bandwidths: readonly number[], n: number): number[] {
  assertBandwidths(bandwidths);
  assertCount('segment count', n);
  const total = bandwidths.reduce((s, b) => s + b, 0);
  if (total === 0) return bandwidths.map(() => 0);
  const counts = bandwidths.map((b) => Math.min(n, Math.floor((b * n) / total)));
  const order = bandwidths
    .map((b, i) => ({ b, i }))
    .filter((d) => d.b > 0)
    .sort((x, y) => y.b - x.b || x.i - y.i)
    .map((d) => d.i);
  let rest = n - counts.reduce((s, c) => s + c, 0);
  // Floating-point floors can miss by one either way when b·n/Σb sits on an integer.
  for (let k = 0; rest > 0; k = (k + 1) % order.length, rest--) counts[order[k]!]!++;
  for (let k = order.length - 1; rest < 0; k = (k + order.length - 1) % order.length) {
    if (counts[order[k]!]! > 0) {
      counts[order[k]!]!--;
      rest++;
    }
  }
  return counts;
}

/**
 * Eq. 2 over the devices that can take segments: a device that is full (`room` 0) or has no
 * bandwidth is skipped and the ratios re-normalise over the rest; a device whose share exceeds
 * its room gets exactly its room and the overflow is re-spread over the others (at most one
 * round per device). What nobody can take is reported as `unplaced`.
 */
export function placeCounts(devices: readonly PlacementDevice[], n: number): { counts: number[]; unplaced: number } {
  assertCount('segment count', n);
  devices.forEach((d, i) => {
    if (d.room !== undefined) assertCount(`room of device ${i}`, d.room);
  });
  assertBandwidths(devices.map((d) => d.bandwidth));
  const counts = devices.map(() => 0);
  let active = devices.map((_, i) => i).filter((i) => devices[i]!.bandwidth > 0 && (devices[i]!.room ?? Infinity) > 0);
  let remaining = n;
  while (remaining > 0 && active.length > 0) {
    const share = targetCounts(
      active.map((i) => devices[i]!.bandwidth),
      remaining,
    );
    const capped = active.filter((i, k) => share[k]! > (devices[i]!.room ?? Infinity));
    if (capped.length === 0) {
      active.forEach((i, k) => (counts[i] = share[k]!));
      remaining = 0;
      break;
    }
    for (const i of capped) {
      counts[i] = devices[i]!.room!;
      remaining -= counts[i]!;
    }
    active = active.filter((i) => !capped.includes(i));
  }
  return { counts, unplaced: remaining };
}

/**
 * Order in which slots go to devices: smooth weighted round-robin (nginx's SWRR) with the
 * counts as weights, so each device appears exactly `counts[i]` times and every window of
 * the sequence is as close to the ratio as integers allow (3:1 gives A A B A A A B A …).
 * The sequence is then rotated left by `rotation`. Returns the device slot per position.
 */
export function interleave(counts: readonly number[], rotation = 0): Int32Array {
  counts.forEach((c, i) => assertCount(`count of device ${i}`, c));
  assertCount('rotation', rotation);
  const total = counts.reduce((s, c) => s + c, 0);
  const seq = new Int32Array(total);
  const current = new Float64Array(counts.length);
  for (let step = 0; step < total; step++) {
    let best = -1;
    for (let i = 0; i < counts.length; i++) {
      current[i]! += counts[i]!;
      if (counts[i]! > 0 && (best < 0 || current[i]! > current[best]!)) best = i;
    }
    current[best]! -= total;
    seq[step] = best;
  }
  if (total === 0 || rotation % total === 0) return seq;
  const r = rotation % total;
  const out = new Int32Array(total);
  out.set(seq.subarray(r), 0);
  out.set(seq.subarray(0, r), total - r);
  return out;
}

/**
 * Bandwidth-proportional placement of one offload batch (Unified KV pooling Eq. 1–2 and
 * Algorithm 1). `segments` must be enumerated layer-wise, as the paper does: every chunk's
 * layer 0, then every chunk's layer 1, … Each device's offload set keeps that order, so its
 * segments can be packed into one contiguous extent and written as one large I/O.
 *
 * Deviation from Algorithm 1 (lines 13–16), on purpose: the paper fills device 1's set up to
 * its count before device 2's. With layer-wise enumeration that puts all early layers on one
 * device and all late layers on another, so a layer-wise load (layer ℓ of every chunk, then
 * ℓ+1, overlapped with compute) reads each layer from a single device and gains nothing from
 * the pool. The counts stay exactly Eq. 2's, but segments are dealt out in the smooth
 * round-robin order of {@link interleave}, so within each layer a request's segments split
 * across devices in ratio (3:1 bandwidth → each layer's reads hit both devices 3:1 once the
 * layer has ≥ 4 segments).
 *
 * The round-robin sequence is rotated by the first segment's chunk position. Batches of
 * equal size at consecutive positions (the store offloading a request chunk by chunk) then
 * continue one another's sequence instead of repeating it, so layer ℓ of chunk 0, 1, 2, … of
 * a prefix written one chunk per batch still alternates devices in ratio.
 *
 * A full device or one without bandwidth gets nothing (see {@link placeCounts}); segments
 * no device has room for are returned as `unplaced` — the tail of the list, i.e. the latest
 * layers, which are also the first that eviction would drop.
 */
export function placeSegments<S extends { readonly position: number }>(
  segments: readonly S[],
  devices: readonly PlacementDevice[],
): SegmentPlacement<S> {
  segments.forEach((s, j) => assertCount(`position of segment ${j}`, s.position));
  const { counts, unplaced } = placeCounts(devices, segments.length);
  const placed = segments.length - unplaced;
  const order = interleave(counts, placed > 0 ? segments[0]!.position : 0);
  const sets: S[][] = devices.map(() => []);
  for (let j = 0; j < placed; j++) sets[order[j]!]!.push(segments[j]!);
  return { sets, counts, unplaced: segments.slice(placed) };
}
