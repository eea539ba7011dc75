// The dashboard as committed: checked (every query tokenizes, names known PromQL functions and
// at least one metric; ids unique) and rendered as JSON text. Pure: generate.mjs writes, the spec compares.
import { dashboard } from './dashboard.js';
import { metricNames } from './promql.js';

/** The dashboard JSON text; throws naming the panel of the first query that does not parse. */
export function renderDashboard(): string {
  const d = dashboard();
  const ids = new Set<number>();
  for (const p of d.panels) {
    if (ids.has(p.id)) throw new Error(`panel id ${p.id} used twice`);
    ids.add(p.id);
    for (const t of p.targets ?? []) {
      let names: string[];
      try {
        names = metricNames(t.expr);
      } catch (e) {
        throw new Error(`panel "${p.title}" query ${t.refId}: ${(e as Error).message}`);
      }
      if (names.length === 0) throw new Error(`panel "${p.title}" query ${t.refId} reads no metric`);
    }
  }
  return `${JSON.stringify(d, null, 2)}\n`;
}
