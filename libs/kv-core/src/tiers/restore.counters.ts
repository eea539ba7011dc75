/** Restore statistics a node exports: what its tiers restored, from which tier, and what it cost the prefills. */
export class RestoreCounters {
  plans = 0;
  restoredTokens = 0;
  /** Restored tokens by the tier they were read from (host when every layer was there). */
  readonly hitTokens = { mem: 0, ssd: 0 };
  failures = 0;
  /** Time the engine waited on loads after compute ran out (blocked I/O), summed over prefills. */
  blockedMs = 0;

  /** A restoring prefill ended: its tokens count (by tier) when it succeeded, else a failure; its blocked time counts either way. */
  ended(ok: boolean, tokens: number, byTier: { readonly mem: number; readonly ssd: number }, blockedMs = 0): void {
    if (ok) {
      this.restoredTokens += tokens;
      this.hitTokens.mem += byTier.mem;
      this.hitTokens.ssd += byTier.ssd;
    } else this.failures++;
    this.blockedMs += blockedMs;
  }
}
