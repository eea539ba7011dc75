import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadFigure } from '@mnemo/testkit';
import { poolingExperiment } from '@mnemo/twin';
import * as vl from 'vega-lite';

// The experiment's own spec is libs/twin/src/experiments/pooling/pooling.experiment.spec.ts; this one checks its
// figure, which is read from bench/figures through testkit.
const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const figure = await loadFigure(root, 'twin-pooling');

describe('unified KV pooling on the twin', () => {
  const run = poolingExperiment();

  it('compiles to a Vega-Lite spec with the paper points at the top length', () => {
    const spec = figure(run as never);
    expect(() => vl.compile(spec as never)).not.toThrow();
    expect(JSON.stringify(spec)).toContain('paper pool');
  });
});
