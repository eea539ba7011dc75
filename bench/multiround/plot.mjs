// The multi-round benchmark's plot: TTFT CDFs of every configuration, and each configuration's
// mean active requests per node (load balance) as a group of bars.
import { svgDocument, ttftCdfParts } from '../lib/ttft-cdf.mjs';

export const COLORS = {
  symphony: '#1b7837',
  llmd: '#762a83',
  infercept: '#2166ac',
  recompute: '#b2182b',
  'sticky-device': '#92c5de',
  'prefix-affinity': '#e08214',
  'symphony-missed10': '#7fbc41',
  'symphony-spurious60': '#8073ac',
  'symphony-host-only': '#35978f',
};

export function svg(runs, summaries) {
  const W = 900, H = 340, L = 60, B = 40, PW = 520;
  const parts = ttftCdfParts(runs, COLORS, { L, B, H, right: PW });
  const names = Object.keys(summaries);
  const maxLoad = Math.max(0.1, ...names.flatMap((n) => Object.values(summaries[n].mean_active_per_node)));
  const gx = PW + 20, gw = (W - gx - 10) / names.length;
  names.forEach((n, i) => {
    const loads = Object.values(summaries[n].mean_active_per_node);
    const bw = (gw - 8) / Math.max(1, loads.length);
    loads.forEach((l, j) => {
      const h = ((H - B - 30) * l) / maxLoad;
      parts.push(`<rect x="${(gx + i * gw + j * bw).toFixed(1)}" y="${(H - B - h).toFixed(1)}" width="${(bw - 1).toFixed(1)}" height="${h.toFixed(1)}" fill="${COLORS[n]}"/>`);
    });
    parts.push(`<text x="${(gx + i * gw + gw / 2 - 4).toFixed(1)}" y="${H - B + 12}" font-size="8" text-anchor="end" transform="rotate(-35 ${(gx + i * gw + gw / 2 - 4).toFixed(1)} ${H - B + 12})">${n}</text>`);
  });
  parts.push(`<text x="${(gx + W) / 2}" y="16" font-size="12" text-anchor="middle">mean active requests per node</text><line x1="${gx}" y1="${H - B}" x2="${W - 10}" y2="${H - B}" stroke="#333"/>`);
  return svgDocument(W, H, parts);
}
