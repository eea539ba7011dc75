import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { circles, houseMap, houseMapSection, sourceFiles, spliceHouseMap } from '@mnemo/testkit';

// docs/architecture.md draws the house from the code's imports; this fails when the drawing is
// stale (run `node scripts/house-map.mjs`) or when two units import each other.
describe('the house map in docs/architecture.md', () => {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  const map = houseMap(sourceFiles(root));

  it('is current', () => {
    const doc = readFileSync(join(root, 'docs/architecture.md'), 'utf8');
    expect(spliceHouseMap(doc, houseMapSection(map)) === doc ? 'current' : 'stale: run `node scripts/house-map.mjs`').toBe('current');
  });

  it('has no circle between units', () => {
    expect(circles(map)).toEqual([]);
  });
});
