// Line panels for the twin's paper experiments: our curves per system, the paper's published
// points drawn over them (hollow markers, labelled), one SVG.
import { svgDocument } from '../../bench/lib/ttft-cdf.mjs';

export const COLORS = { symphony: '#1b7837', recompute: '#b2182b', infercept: '#2166ac', llmd: '#762a83', 'symphony-missed10': '#7fbc41', 'symphony-spurious60': '#8073ac', baseline: '#b2182b', fastswitch: '#1b7837', 'block-groups': '#e08214', 'groups+reuse': '#35978f' };

const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;');

/**
 * One panel: `series` is { name: [[x, y], …] }, `paper` is [{ x, y, label }], x on a log2 axis
 * when `logX`. Returns SVG parts placed at (ox, oy) with size (w, h).
 */
export function panel({ ox, oy, w, h, title, xLabel, yLabel, series, paper = [], logX = false, hline }) {
  const pts = [...Object.values(series).flat(), ...paper.map((p) => [p.x, p.y])].filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
  if (hline) pts.push([pts[0]?.[0] ?? 1, hline.y]);
  const fx = (x) => (logX ? Math.log2(x) : x);
  const xs = pts.map(([x]) => fx(x));
  const ys = pts.map(([, y]) => y);
  const [x0, x1] = [Math.min(...xs), Math.max(...xs) === Math.min(...xs) ? Math.min(...xs) + 1 : Math.max(...xs)];
  const y1 = Math.max(...ys, 0) * 1.1 || 1;
  const X = (x) => ox + 45 + ((fx(x) - x0) / (x1 - x0)) * (w - 60);
  const Y = (y) => oy + h - 30 - (y / y1) * (h - 55);
  const parts = [
    `<text x="${ox + w / 2}" y="${oy + 14}" font-size="12" text-anchor="middle">${esc(title)}</text>`,
    `<line x1="${ox + 45}" y1="${oy + h - 30}" x2="${ox + w - 10}" y2="${oy + h - 30}" stroke="#333"/>`,
    `<line x1="${ox + 45}" y1="${oy + 25}" x2="${ox + 45}" y2="${oy + h - 30}" stroke="#333"/>`,
    `<text x="${ox + w / 2}" y="${oy + h - 4}" font-size="10" text-anchor="middle">${esc(xLabel)}</text>`,
    `<text x="${ox + 10}" y="${oy + h / 2}" font-size="10" text-anchor="middle" transform="rotate(-90 ${ox + 10} ${oy + h / 2})">${esc(yLabel)}</text>`,
  ];
  for (const t of [0, 0.5, 1]) parts.push(`<text x="${ox + 42}" y="${Y(t * y1) + 3}" font-size="9" text-anchor="end">${(t * y1).toPrecision(3)}</text>`);
  const ticks = [...new Set(Object.values(series).flat().map(([x]) => x))].sort((a, b) => a - b);
  for (const x of ticks) parts.push(`<text x="${X(x)}" y="${oy + h - 18}" font-size="9" text-anchor="middle">${x}</text>`);
  if (hline) parts.push(`<line x1="${ox + 45}" y1="${Y(hline.y)}" x2="${ox + w - 10}" y2="${Y(hline.y)}" stroke="#999" stroke-dasharray="4 3"/><text x="${ox + w - 12}" y="${Y(hline.y) - 3}" font-size="9" text-anchor="end" fill="#666">${esc(hline.label)}</text>`);
  let legend = 0;
  for (const [name, line] of Object.entries(series)) {
    const ok = line.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
    if (!ok.length) continue;
    const c = COLORS[name] ?? '#444';
    parts.push(`<polyline fill="none" stroke="${c}" stroke-width="2" points="${ok.map(([x, y]) => `${X(x).toFixed(1)},${Y(y).toFixed(1)}`).join(' ')}"/>`);
    for (const [x, y] of ok) parts.push(`<circle cx="${X(x).toFixed(1)}" cy="${Y(y).toFixed(1)}" r="2.5" fill="${c}"/>`);
    parts.push(`<text x="${ox + 52}" y="${oy + 30 + 11 * legend++}" font-size="9" fill="${c}">${esc(name)}</text>`);
  }
  for (const p of paper) parts.push(`<circle cx="${X(p.x).toFixed(1)}" cy="${Y(p.y).toFixed(1)}" r="5" fill="none" stroke="#000" stroke-width="1.5"/><text x="${(X(p.x) + 7).toFixed(1)}" y="${(Y(p.y) - 5).toFixed(1)}" font-size="9">${esc(p.label)}</text>`);
  return parts;
}

export function panelsSvg(panels, { w = 360, h = 260, cols = 3 } = {}) {
  const parts = panels.flatMap((p, i) => panel({ ...p, ox: (i % cols) * w, oy: Math.floor(i / cols) * h, w, h }));
  return svgDocument(cols * w, Math.ceil(panels.length / cols) * h, parts);
}
