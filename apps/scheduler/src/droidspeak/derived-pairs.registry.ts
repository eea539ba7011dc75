import { transitionLayers, type ReusePattern } from '@mnemo/kv-core';

/**
 * What the scheduler knows of DroidSpeak pairs: derived model → its base, and the transition
 * layers of the pair's latest frontier (whose E caches a peer may hold). Pairs come from
 * SCHEDULER_DROIDSPEAK_BASES and from the profiler's FrontierUpdated notices, which also bring
 * the layers; a configured pair whose frontier was not heard yet routes on the base's KV alone
 * (the node then runs a plan needing an E cache widened).
 */
export class DerivedPairsRegistry {
  private readonly bases = new Map<string, string>();
  private readonly layers = new Map<string, number[]>();

  constructor(configured: ReadonlyMap<string, string> = new Map()) {
    for (const [derived, base] of configured) this.bases.set(derived, base);
  }

  baseOf(derived: string): string | undefined {
    return this.bases.get(derived);
  }

  /** Transition layers of the pair's frontier as last heard (empty when none). */
  eLayers(derived: string): readonly number[] {
    return this.layers.get(derived) ?? [];
  }

  /** A FrontierUpdated notice: the pair is known from now on, with its frontier's transition layers. */
  frontierUpdated(base: string, derived: string, frontier: ReadonlyArray<{ readonly pattern: ReusePattern }>): void {
    if (!base || !derived || base === derived) return;
    this.bases.set(derived, base);
    this.layers.set(derived, transitionLayers(frontier));
  }
}

export const DERIVED_PAIRS = Symbol('DERIVED_PAIRS');

/** `derived=base` entries (SCHEDULER_DROIDSPEAK_BASES) → map; problems listed, not thrown. */
export function parseDerivedBases(entries: readonly string[]): { bases: Map<string, string>; problems: string[] } {
  const bases = new Map<string, string>();
  const problems: string[] = [];
  for (const entry of entries) {
    const [derived, base, ...more] = entry.split('=').map((s) => s.trim());
    if (!derived || !base || more.length > 0)
      problems.push(`SCHEDULER_DROIDSPEAK_BASES entry ${JSON.stringify(entry)}: must be derived=base`);
    else if (derived === base) problems.push(`SCHEDULER_DROIDSPEAK_BASES entry ${JSON.stringify(entry)}: a model is not its own base`);
    else bases.set(derived, base);
  }
  return { bases, problems };
}
