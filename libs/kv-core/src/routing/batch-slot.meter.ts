/**
 * How often a node's batch frees a slot, from the sequences it finishes: the mean time a sequence
 * spends in the batch (admission to its last token), exponentially weighted so it follows the
 * traffic, divided by the batch size. Reported once `minSamples` sequences back it.
 */
export class BatchSlotMeter {
  private meanMs = 0;
  private n = 0;

  constructor(
    private readonly maxBatch: number,
    private readonly alpha = 0.05,
    private readonly minSamples = 8,
  ) {
    if (!Number.isInteger(maxBatch) || maxBatch < 1) throw new RangeError(`maxBatch must be a positive integer, got ${maxBatch}`);
    if (!(alpha > 0 && alpha <= 1)) throw new RangeError(`alpha must be in (0, 1], got ${alpha}`);
  }

  /** A sequence left the batch after `residencyMs` in it; a non-finite or negative time is ignored. */
  finished(residencyMs: number): void {
    if (!Number.isFinite(residencyMs) || residencyMs < 0) return;
    this.n++;
    // The first samples average plainly, then the weight settles at alpha.
    const w = Math.max(this.alpha, 1 / this.n);
    this.meanMs += w * (residencyMs - this.meanMs);
  }

  /** ms between freed slots while the batch is full; undefined before `minSamples` sequences. */
  slotMs(): number | undefined {
    return this.n >= this.minSamples ? this.meanMs / this.maxBatch : undefined;
  }
}
