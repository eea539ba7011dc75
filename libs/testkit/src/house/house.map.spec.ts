import { circles, houseMap, houseMapSection, mermaid, spliceHouseMap, unitOf, HOUSE_MAP_END, HOUSE_MAP_START } from './house.map.js';

describe(houseMap.name, () => {
  it.each<[string, string | null]>([
    ['apps/gateway/src/main.ts', 'apps/gateway'],
    ['libs/kv-core/src/keys/index.ts', 'libs/kv-core'],
    ['tools/twin/plan.mjs', 'tools/twin'],
    ['deploy/k8s/lib/render.ts', 'deploy/k8s'],
    ['bench/lib/figures.mjs', 'bench'],
    ['scripts/start.mjs', 'scripts'],
    ['test/integration/cluster.ts', 'test'],
    ['apps/gateway/src/x.spec.ts', null],
    ['test/integration/x.integration-spec.ts', null],
    ['libs/proto/src/gen/mnemo/v1/nats_pb.ts', null],
    ['libs/kv-core/dist/index.js', null],
    ['README.md', null],
  ])('%s belongs to %s', (path, unit) => {
    expect(unitOf(path)).toBe(unit);
  });

  const files = new Map([
    ['apps/gateway/src/a.ts', "import { x } from '@mnemo/kv-core';\nimport { y } from './b.js';\nexport { z } from '@mnemo/proto';"],
    ['apps/gateway/src/b.ts', "import type { T } from '@mnemo/kv-core';"],
    ['apps/gateway/src/a.spec.ts', "import { s } from '@mnemo/engine';"],
    ['libs/kv-core/src/index.ts', "export * from './keys/index.js';"],
    ['bench/x.mjs', "import { a } from '../tools/infra/index.mjs';\nconst m = await import('./lib/y.mjs');"],
    ['tools/infra/index.mjs', "import { b } from '../../bench/lib/z.mjs';"],
    ['tools/twin/t.mjs', "import { c } from 'node:fs';"],
  ]);

  it('draws one arrow per pair of units, counting importing files; specs and packages draw none', () => {
    const sut = houseMap(files);
    expect(sut.units).toEqual(['apps/gateway', 'bench', 'libs/kv-core', 'tools/infra', 'tools/twin']);
    expect(Object.fromEntries([...sut.arrows].map(([k, v]) => [k, Object.fromEntries(v)]))).toEqual({
      'apps/gateway': { 'libs/kv-core': 2, 'libs/proto': 1 },
      bench: { 'tools/infra': 1 },
      'tools/infra': { bench: 1 },
    });
  });

  it('names a circle, and none where the arrows run one way', () => {
    expect(circles(houseMap(files))).toEqual([['bench', 'tools/infra']]);
    const oneWay = new Map(files);
    oneWay.delete('tools/infra/index.mjs');
    expect(circles(houseMap(oneWay))).toEqual([]);
    expect(houseMapSection(houseMap(oneWay))).toContain('No unit imports back');
  });

  it('writes stable Mermaid text and splices it between the markers', () => {
    const text = mermaid(houseMap(files));
    expect(text).toContain('apps_gateway -->|2| libs_kv_core');
    const doc = `# T\n\n${HOUSE_MAP_START}\nold\n${HOUSE_MAP_END}\n\nafter\n`;
    const out = spliceHouseMap(doc, houseMapSection(houseMap(files)));
    expect(out).toContain('flowchart TD');
    expect(out).not.toContain('old');
    expect(out.endsWith('\n\nafter\n')).toBe(true);
    expect(() => spliceHouseMap('# no markers', 'x')).toThrow(/house-map/);
  });
});
