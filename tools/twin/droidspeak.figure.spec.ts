import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadFigure } from '@mnemo/testkit';
import { DROIDSPEAK_SETUP, droidspeakExperiment, profiledPairs, type DroidspeakProfiles } from '@mnemo/twin';
import * as vl from 'vega-lite';

// The experiment itself is specified beside it (libs/twin/src/experiments/droidspeak) on a few of the
// measured pairs; here, what the twin may not read: every committed profile, and the figure module.
const small = { ...DROIDSPEAK_SETUP, requests: 40, rates: [0.2, 1, 5], floors: [0.01, 0.15], sloSensitivity: [5], contexts: [1024, 8192] };

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const profiles = JSON.parse(readFileSync(join(root, 'bench/results/droidspeak.json'), 'utf8')) as DroidspeakProfiles;
const figure = await loadFigure(root, 'twin-droidspeak');

describe('the DroidSpeak experiment on the committed profiles, and its figure', () => {
  const run = droidspeakExperiment({ s: small, profiles });

  it('runs every trained pair of the committed profiles and the constructed one', () => {
    const trained = profiledPairs(profiles)
      .filter((p) => p.kind === 'trained')
      .map((p) => p.name);
    expect(Object.keys(run.runs).sort()).toEqual([...trained, small.constructed].sort());
  });

  it('renders a Vega-Lite spec with the paper points over the curves', () => {
    const spec = figure(run as never);
    expect(() => vl.compile(spec as never)).not.toThrow();
    expect(JSON.stringify(spec)).toContain('paper Fig. 15');
    expect(JSON.stringify(spec)).toContain('paper Fig. 16');
  });
});
