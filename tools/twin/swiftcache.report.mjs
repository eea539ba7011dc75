// The SwiftCache experiment's results file, with a progress bar while it runs (its figure is
// bench/figures/twin-swiftcache.figure.mjs, rendered from the file).
import cliProgress from 'cli-progress';
import { SWIFTCACHE_SETUP } from './swiftcache.setup.mjs';
import { swiftcacheExperiment } from './swiftcache.mjs';
import { swiftcacheRobustness } from './swiftcache-robustness.mjs';

/** Steps the progress bar counts: each memory point, each rate, the interference, each robustness case. */
const steps = (s) => s.memoryPoints.length + s.ratesPerS.length + 1;

export function runSwiftcache(s = SWIFTCACHE_SETUP) {
  const robustCases = 5 * 2 + 2;
  const total = steps(s) + robustCases;
  const bar = new cliProgress.SingleBar(
    {
      format: 'swiftcache |{bar}| {value}/{total} · {label} · {duration_formatted}',
      clearOnComplete: false,
      noTTYOutput: true,
      notTTYSchedule: 30_000,
    },
    cliProgress.Presets.shades_classic,
  );
  let i = 0;
  bar.start(total, 0, { label: 'start' });
  const tick = (label) => bar.update(i++, { label });
  const started = performance.now();
  const result = swiftcacheExperiment(s, tick);
  const robustness = swiftcacheRobustness(s, tick);
  bar.update(total, { label: 'done' });
  bar.stop();
  return { ...result, robustness, wall_s: Math.round(performance.now() - started) / 1000 };
}
