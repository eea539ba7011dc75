import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadFigure, UTILIZATION } from '@mnemo/testkit';
import { SWIFTCACHE_SETUP, swiftcacheExperiment } from '@mnemo/twin';
import * as vl from 'vega-lite';

// The experiment itself is specified beside it (libs/twin/src/experiments/swiftcache); here, what
// the twin may not import: the figure module and the live bench's settings.
const small = { ...SWIFTCACHE_SETUP, ratesPerS: [0.5, 1.5], requests: 200 };

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const figure = await loadFigure(root, 'twin-swiftcache');

describe('SwiftCache on the twin: its figure', () => {
  it('compiles to a Vega-Lite spec with the paper figures drawn', () => {
    const spec = figure(swiftcacheExperiment(small) as never);
    expect(() => vl.compile(spec as never)).not.toThrow();
    expect(JSON.stringify(spec)).toContain('paper max 3.98');
  });

  it("sizes every model's memory as the live bench does", () => {
    expect(SWIFTCACHE_SETUP.utilization).toBe(UTILIZATION);
  });
});
