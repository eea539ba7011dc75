// The DroidSpeak experiment's results (bench/results/twin-droidspeak.json, less its run stamp and
// wall time): the experiment and its ±20% rows. The figure is bench/figures/twin-droidspeak.figure.mjs.
import { droidspeakExperiment, type DroidspeakExperiment } from './droidspeak.experiment.js';
import { profiledPairs, type DroidspeakProfiles } from './droidspeak.profiles.js';
import type { TargetCheck } from '../shared/experiment.ports.js';
import { DROIDSPEAK_ROBUSTNESS_CASES, droidspeakRobustness, type DroidspeakRobustness } from './droidspeak.robustness.js';
import { DROIDSPEAK_SETUP, type DroidspeakSetup } from './droidspeak.setup.js';

export type DroidspeakResults = DroidspeakExperiment & { readonly robustness: DroidspeakRobustness };

/**
 * Labels `progress` is told over a whole run, near enough for a bar: each pair's configurations (two
 * baselines, the task floor and three per floor; the constructed pair has no task floor), then each
 * robustness case.
 */
export function droidspeakSteps(profiles: DroidspeakProfiles, s: DroidspeakSetup = DROIDSPEAK_SETUP): number {
  const pairs = profiledPairs(profiles).filter((p) => p.kind === 'trained' || p.name === s.constructed).length;
  const configs = 3 + 3 * s.floors.length;
  return pairs * configs + DROIDSPEAK_ROBUSTNESS_CASES;
}

/** The experiment on `profiles` and its ±20% rows, the headline judged by `holds`. */
export function droidspeakResults({
  s = DROIDSPEAK_SETUP,
  profiles,
  holds,
  progress = () => {},
}: {
  readonly s?: DroidspeakSetup;
  readonly profiles: DroidspeakProfiles;
  readonly holds: TargetCheck;
  readonly progress?: (label: string) => void;
}): DroidspeakResults {
  const experiment = droidspeakExperiment({ s, profiles, progress });
  const robustness = droidspeakRobustness({ s, profiles, holds, progress });
  return { ...experiment, robustness };
}
