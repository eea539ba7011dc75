import { patternGrid, patternKey, type ProfiledPattern } from '@mnemo/kv-core';
import { renderHeatmap } from './heatmap.svg.js';

function measured(layers: number): ProfiledPattern[] {
  return patternGrid(layers).map((pattern, i) => ({
    pattern,
    quality: (i % 10) / 9,
    meanKl: i / 100,
    recomputedLayers: pattern.r1 + pattern.r2 - pattern.u1,
    eCacheBytesPerToken: 0,
    prefillMs: i,
  }));
}

describe(renderHeatmap.name, () => {
  it('draws one cell per pattern, keyed by pattern, and outlines the frontier', () => {
    const patterns = measured(4);
    const sut = renderHeatmap('a → b <&>', 4, patterns, [patterns[3]!]);
    const cells = [...sut.matchAll(/data-pattern="([0-9-]+)"/g)].map((m) => m[1]);
    expect(cells.sort()).toEqual(patterns.map((p) => patternKey(p.pattern)).sort());
    expect(sut).toContain(`data-pattern="${patternKey(patterns[3]!.pattern)}" data-quality="${patterns[3]!.quality}"`);
    expect(sut.match(/stroke="black"/g)).toHaveLength(1);
    expect(sut).toContain('a → b &lt;&amp;&gt;');
    expect(sut.startsWith('<svg ')).toBe(true);
  });
});
