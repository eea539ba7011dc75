// The DroidSpeak experiment's results file, with a progress bar while it runs (its figure is
// bench/figures/twin-droidspeak.figure.mjs, rendered from the file).
import cliProgress from 'cli-progress';
import { DROIDSPEAK_SETUP, droidspeakExperiment } from './droidspeak.mjs';
import { droidspeakRobustness } from './droidspeak-robustness.mjs';
import { profiledPairs, readProfiles } from './droidspeak-profiles.mjs';

export async function runDroidspeak({ s = DROIDSPEAK_SETUP, results = readProfiles() } = {}) {
  const pairs = profiledPairs(results).filter((p) => p.kind === 'trained' || p.name === s.constructed).length;
  const configs = 3 + 3 * s.floors.length;
  const total = pairs * configs + 6;
  // Without a terminal (a log file), the bar prints a line every 30 s instead of redrawing.
  const bar = new cliProgress.SingleBar(
    {
      format: 'droidspeak |{bar}| {value}/{total} · {label} · {duration_formatted}',
      clearOnComplete: false,
      noTTYOutput: true,
      notTTYSchedule: 30_000,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0, { label: 'starting' });
  let done = 0;
  const progress = (label) => bar.update(done++, { label });
  const started = performance.now();
  const experiment = droidspeakExperiment({ s, results, progress });
  const robustness = droidspeakRobustness({ s, results, progress });
  bar.update(total, { label: 'done' });
  bar.stop();
  return { ...experiment, robustness, experiment_wall_s: Math.round(performance.now() - started) / 1000 };
}
