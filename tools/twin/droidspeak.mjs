// `npm run twin -- droidspeak`: DroidSpeak's serving experiment on the twin (libs/twin
// experiments/droidspeak) and its ±20% rows, on the profiles the reference engine measured on the
// trained pairs (bench/results/droidspeak.json, `npm run bench -- droidspeak`), judged against the
// `twin-droidspeak` target registered in testkit, which the twin cannot import; with a progress bar
// (its figure is bench/figures/twin-droidspeak.figure.mjs).
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { holds, targetOf } from '@mnemo/testkit';
import { DROIDSPEAK_SETUP, droidspeakResults, droidspeakSteps } from '@mnemo/twin';
import cliProgress from 'cli-progress';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const PROFILE_FILE = 'bench/results/droidspeak.json';

export function readProfiles(path = join(root, PROFILE_FILE)) {
  return JSON.parse(readFileSync(path, 'utf8'));
}

export async function runDroidspeak({ s = DROIDSPEAK_SETUP, profiles = readProfiles() } = {}) {
  const total = droidspeakSteps(profiles, s);
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
  const results = droidspeakResults({ s, profiles, holds: (path, value) => holds(value, targetOf('twin-droidspeak', path)), progress });
  bar.update(total, { label: 'done' });
  bar.stop();
  return { ...results, experiment_wall_s: Math.round(performance.now() - started) / 1000 };
}
