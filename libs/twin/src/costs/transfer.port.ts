/**
 * One link KV crosses (a tier's reads, a copy into the device, a peer's stream): a transfer of
 * `bytes` in `calls` calls costs `calls × dispatchMs + bytes / bytesPerMs`. Per-call dispatch is
 * what dominates small copies (FastSwitch §2.2: a 128 KB block copy is 90–95% dispatch); the
 * bandwidth term dominates large ones.
 */
export interface TransferLink {
  /** Fixed cost of one call (a transfer submitted and awaited), ms. */
  readonly dispatchMs: number;
  /** Bytes carried per ms once moving (bytes/ms = KB/s; Infinity: free). */
  readonly bytesPerMs: number;
}

export function transferMs(link: TransferLink, calls: number, bytes: number): number {
  if (calls <= 0 && bytes <= 0) return 0;
  return calls * link.dispatchMs + (Number.isFinite(link.bytesPerMs) ? bytes / link.bytesPerMs : 0);
}

/** A link from one measured point at two sizes: the per-call part and the per-byte part that explain both. */
export function linkFromTwoPoints(small: { bytes: number; ms: number }, large: { bytes: number; ms: number }, calls = 1): TransferLink {
  if (!(large.bytes > small.bytes)) throw new RangeError('linkFromTwoPoints: the large transfer must carry more bytes');
  const perByte = Math.max(0, (large.ms - small.ms) / (large.bytes - small.bytes));
  const dispatchMs = Math.max(0, (small.ms - perByte * small.bytes) / calls);
  return { dispatchMs, bytesPerMs: perByte > 0 ? 1 / perByte : Infinity };
}

export function validateLink(name: string, l: TransferLink): TransferLink {
  if (!(l.dispatchMs >= 0) || !Number.isFinite(l.dispatchMs))
    throw new RangeError(`${name}: dispatchMs must be finite and ≥ 0, got ${l.dispatchMs}`);
  if (!(l.bytesPerMs > 0)) throw new RangeError(`${name}: bytesPerMs must be > 0 (Infinity for free), got ${l.bytesPerMs}`);
  return l;
}
