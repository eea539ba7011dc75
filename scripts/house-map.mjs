// Draws the house from its imports into docs/architecture.md (the section between its house-map
// markers): one room per app, lib, tools/ and deploy/ folder, bench/, scripts/ and test/.
// `--check` only compares (exit 1 when the committed chart is stale); tools/house-map.spec.ts
// does the same in `npm test`.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { houseMap, houseMapSection, sourceFiles, spliceHouseMap } from '@mnemo/testkit';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const file = join(root, 'docs/architecture.md');
const doc = readFileSync(file, 'utf8');
const next = spliceHouseMap(doc, houseMapSection(houseMap(sourceFiles(root))));
if (process.argv.includes('--check')) {
  if (next !== doc) {
    console.error('docs/architecture.md: the house map is stale; run `node scripts/house-map.mjs`');
    process.exit(1);
  }
} else {
  writeFileSync(file, next);
  console.log('docs/architecture.md: house map written');
}
