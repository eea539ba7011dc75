import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dashboard, dashboardQueries } from '../deploy/grafana/lib/dashboard.js';
import { familyOf, metricNames } from '../deploy/grafana/lib/promql.js';
import { renderDashboard } from '../deploy/grafana/lib/render.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Metric names the services' sources declare (string literals `'mnemo_…'` outside specs). */
function declaredMetrics(): Set<string> {
  const names = new Set<string>();
  const walk = (dir: string) => {
    for (const f of readdirSync(dir)) {
      const p = join(dir, f);
      if (f === 'dist' || f === 'node_modules') continue;
      if (statSync(p).isDirectory()) walk(p);
      else if (f.endsWith('.ts') && !f.endsWith('.spec.ts'))
        for (const [, n] of readFileSync(p, 'utf8').matchAll(/'(mnemo_[a-z0-9_]+)'/g)) names.add(n!);
    }
  };
  for (const app of readdirSync(join(root, 'apps'))) walk(join(root, 'apps', app, 'src'));
  walk(join(root, 'libs/service-kit/src'));
  return names;
}

describe('Grafana dashboard (deploy/grafana)', () => {
  const d = dashboard();

  it('the committed mnemo.json is the generated one', () => {
    if (readFileSync(join(root, 'deploy/grafana/mnemo.json'), 'utf8') !== renderDashboard())
      throw new Error('deploy/grafana/mnemo.json is stale: run `node deploy/grafana/generate.mjs`');
  });

  it('imports into Grafana: schema version, a Prometheus datasource variable every query uses, unique ids', () => {
    expect(d.schemaVersion).toBeGreaterThanOrEqual(36);
    expect(d.uid).toMatch(/^[a-z0-9-]{1,40}$/);
    expect(d.templating.list).toContainEqual(expect.objectContaining({ name: 'datasource', type: 'datasource', query: 'prometheus' }));
    const ids = d.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const p of d.panels.filter((x) => x.type !== 'row')) {
      expect(p.datasource).toEqual({ type: 'prometheus', uid: '${datasource}' });
      expect(p.targets!.length).toBeGreaterThan(0);
      for (const t of p.targets!)
        expect(t).toMatchObject({
          refId: expect.stringMatching(/^[A-Z]$/),
          datasource: { uid: '${datasource}' },
          expr: expect.any(String),
        });
    }
  });

  it('lays panels out on the 24-column grid without overlaps', () => {
    const cells = new Set<string>();
    for (const p of d.panels) {
      const { x, y, w, h } = p.gridPos;
      expect(x + w).toBeLessThanOrEqual(24);
      for (let i = x; i < x + w; i++) {
        for (let j = y; j < y + h; j++) {
          if (cells.has(`${i},${j}`)) throw new Error(`panel "${p.title}" overlaps another at ${i},${j}`);
          cells.add(`${i},${j}`);
        }
      }
    }
  });

  it.each([
    'TTFT',
    'TPOT',
    'queue',
    'hit',
    'bytes moved per tier',
    'per peer link',
    'blocked',
    'advisory outcomes',
    'failovers by outcome',
    'failover gap',
    'nodes dropped',
    'preemptions',
    'elastic',
    'cross-model',
  ])('covers %s', (topic) => {
    const text = d.panels
      .map((p) => `${p.title} ${(p as { description?: string }).description ?? ''}`)
      .join('\n')
      .toLowerCase();
    const alias: Record<string, string> = { TTFT: 'time to first token', TPOT: 'time per output token' };
    expect(text).toContain((alias[topic] ?? topic).toLowerCase());
  });

  it('names only metrics the services declare', () => {
    const declared = declaredMetrics();
    const types = new Map([...declared].map((n) => [n, 'histogram']));
    const unknown = dashboardQueries().flatMap((q) =>
      metricNames(q.expr)
        .filter((n) => !declared.has(familyOf(n, types)) && !declared.has(n))
        .map((n) => `${q.panel}: ${n}`),
    );
    expect(unknown).toEqual([]);
  });
});

describe(metricNames.name, () => {
  it.each<[string, string, string[]]>([
    ['a bare metric', 'mnemo_scheduler_live_nodes', ['mnemo_scheduler_live_nodes']],
    ['label matchers are not metrics', 'mnemo_kv_tier_bytes{tier="host", state=~"used|capacity"}', ['mnemo_kv_tier_bytes']],
    ['rate over a Grafana window', 'rate(mnemo_requests_total{service="gateway"}[$__rate_interval])', ['mnemo_requests_total']],
    ['sum by before the argument', 'sum by (outcome, reason) (rate(x_total[5m]))', ['x_total']],
    ['sum by after the argument', 'sum(rate(x_total[5m])) by (le)', ['x_total']],
    [
      'histogram_quantile over buckets',
      'histogram_quantile(0.99, sum by (le) (rate(mnemo_ttft_seconds_bucket[1m])))',
      ['mnemo_ttft_seconds_bucket'],
    ],
    [
      'binary operators, scalar(), each name once',
      'sum(rate(a_total[1m])) / scalar(sum(rate(a_total[1m])) + sum(rate(b_total[1m])))',
      ['a_total', 'b_total'],
    ],
    ['vector matching', 'a / ignoring(tier) group_left sum(b)', ['a', 'b']],
    ['on() with group_right(labels)', 'a * on (instance) group_right (model) b', ['a', 'b']],
    ['keywords, offset and bool', 'a > bool 1 and b offset 5m or c unless d', ['a', 'b', 'c', 'd']],
    ['increase over the dashboard range', 'sum(increase(m_total{outcome="hit"}[$__range]))', ['m_total']],
    ['strings holding names and braces', 'label_replace(a, "dst", "$1", "src", "(x{y})")', ['a']],
    ['a colon-named recording rule', 'job:mnemo_requests:rate5m', ['job:mnemo_requests:rate5m']],
  ])('%s', (_n, expr, names) => {
    expect(metricNames(expr)).toEqual(names);
  });

  it.each<[string, string]>([
    ['an unknown function', 'rat(x[1m])'],
    ['an unclosed parenthesis', 'sum(rate(x[1m])'],
    ['a mismatched bracket', 'sum(rate(x[1m)))'],
    ['a stray close', 'x)'],
    ['a character PromQL does not use', 'x ; y'],
    ['by without a label list', 'sum by x'],
    ['a label list with an expression', 'sum by (rate(x)) (y)'],
  ])('rejects %s', (_n, expr) => {
    expect(() => metricNames(expr)).toThrow(SyntaxError);
  });
});

describe(familyOf.name, () => {
  const types = new Map([
    ['h', 'histogram'],
    ['s', 'summary'],
    ['c', 'counter'],
  ]);
  it.each([
    ['h_bucket', 'h'],
    ['h_sum', 'h'],
    ['h_count', 'h'],
    ['s_sum', 's'],
    ['s_bucket', 's_bucket'],
    ['c', 'c'],
    ['c_count', 'c_count'],
    ['unknown', 'unknown'],
  ])('%s belongs to %s', (series, family) => {
    expect(familyOf(series, types)).toBe(family);
  });
});
