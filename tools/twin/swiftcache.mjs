// `npm run twin -- swiftcache`: SwiftCache's experiment on the twin (libs/twin experiments/swiftcache)
// and its ±20% rows, judged against the `twin-swiftcache` targets registered in testkit, which the
// twin cannot import; with a progress bar (its figure is bench/figures/twin-swiftcache.figure.mjs).
import { holds, targetOf } from '@mnemo/testkit';
import { SWIFTCACHE_HEADLINES, SWIFTCACHE_SETUP, swiftcacheResults, swiftcacheSteps } from '@mnemo/twin';
import cliProgress from 'cli-progress';

export function runSwiftcache(s = SWIFTCACHE_SETUP) {
  const total = swiftcacheSteps(s);
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
  const { robustness, ...result } = swiftcacheResults((path, value) => holds(value, targetOf('twin-swiftcache', path)), s, tick);
  bar.update(total, { label: 'done' });
  bar.stop();
  // The targets as registered, beside the rows they judged.
  const targets = Object.fromEntries(SWIFTCACHE_HEADLINES.map((k) => [k, targetOf('twin-swiftcache', `swiftcache.${k}`)]));
  return {
    ...result,
    robustness: { rows: robustness.rows, targets, ...robustness },
    wall_s: Math.round(performance.now() - started) / 1000,
  };
}
