import { patternKey, type ProfiledPattern } from '@mnemo/kv-core';

const CELL = 26;
const GAP = 40;
const MARGIN = 48;

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** Red (quality 0) → yellow → green (quality 1): the DroidSpeak Fig. 12 reading at a glance. */
function color(q: number): string {
  const t = Math.min(1, Math.max(0, q));
  const r = t < 0.5 ? 220 : Math.round(220 - (t - 0.5) * 2 * 180);
  const g = t < 0.5 ? Math.round(60 + t * 2 * 160) : 220;
  return `rgb(${r},${g},60)`;
}

/**
 * The quality/cost heatmap of a profiled pair as standalone SVG. One panel per r1 (layers
 * recomputed at the bottom); in a panel the x axis is r2 (where reuse resumes) and the y
 * axis u1 (where recomputation restarts from the E cache), as in DroidSpeak Fig. 12. Each
 * profiled pattern is one `<rect data-pattern="r1-u1-r2">` coloured by top-1 agreement,
 * labelled with its recomputed layers; frontier points have a black outline.
 */
export function renderHeatmap(
  title: string,
  layers: number,
  patterns: readonly ProfiledPattern[],
  frontier: readonly ProfiledPattern[],
): string {
  const onFrontier = new Set(frontier.map((p) => patternKey(p.pattern)));
  const panels = [...new Set(patterns.map((p) => p.pattern.r1))].sort((a, b) => a - b);
  const side = (layers + 1) * CELL;
  const width = MARGIN + panels.length * (side + GAP) + MARGIN;
  const height = MARGIN + 30 + side + MARGIN;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" ` +
      `viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="${MARGIN}" y="24" font-size="14">${esc(title)} — top-1 agreement ` +
      `per pattern (label: layers recomputed; outline: Pareto frontier)</text>`,
  ];
  panels.forEach((r1, i) => {
    const x0 = MARGIN + i * (side + GAP);
    const y0 = MARGIN + 30;
    out.push(`<g class="panel" data-r1="${r1}">`);
    out.push(`<text x="${x0}" y="${y0 - 8}">r1 = ${r1} (x: r2, y: u1)</text>`);
    for (let k = 0; k <= layers; k++) {
      out.push(`<text x="${x0 + k * CELL + CELL / 2}" y="${y0 + side + 14}" text-anchor="middle">${k}</text>`);
      out.push(`<text x="${x0 - 6}" y="${y0 + k * CELL + CELL / 2 + 4}" text-anchor="end">${k}</text>`);
    }
    for (const p of patterns.filter((q) => q.pattern.r1 === r1)) {
      const key = patternKey(p.pattern);
      const x = x0 + p.pattern.r2 * CELL;
      const y = y0 + p.pattern.u1 * CELL;
      const stroke = onFrontier.has(key) ? ' stroke="black" stroke-width="2"' : ' stroke="white"';
      out.push(
        `<rect class="cell" data-pattern="${key}" data-quality="${p.quality}" x="${x}" ` +
          `y="${y}" width="${CELL}" height="${CELL}" fill="${color(p.quality)}"${stroke}>` +
          `<title>(${p.pattern.r1}, ${p.pattern.u1}, ${p.pattern.r2}): top-1 ${(p.quality * 100).toFixed(1)}%, KL ` +
          `${p.meanKl.toFixed(4)}, ${p.recomputedLayers} recomputed, ${p.prefillMs.toFixed(2)} ms</title></rect>`,
      );
      out.push(`<text x="${x + CELL / 2}" y="${y + CELL / 2 + 4}" text-anchor="middle">${p.recomputedLayers}</text>`);
    }
    out.push('</g>');
  });
  out.push('</svg>');
  return out.join('\n');
}
