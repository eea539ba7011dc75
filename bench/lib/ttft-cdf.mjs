// The TTFT CDF both chat benchmarks draw: one line per run on a log time axis, labelled, with
// axes; SVG parts for a plot whose area spans x in [L, right] and y in [20, H - B].
export function ttftCdfParts(runs, colors, { L, B, H, right }) {
  const max = Math.max(...Object.values(runs).flatMap((r) => r.results.map((x) => x.ttftMs)));
  const x = (ms) => L + ((right - L - 20) * Math.log10(1 + ms)) / Math.log10(1 + max);
  const y = (p) => H - B - (H - B - 20) * p;
  const parts = [];
  for (const [name, r] of Object.entries(runs)) {
    const s = r.results.map((v) => v.ttftMs).sort((a, b) => a - b);
    const pts = s.map((v, i) => `${x(v).toFixed(1)},${y((i + 1) / s.length).toFixed(1)}`).join(' ');
    parts.push(`<polyline fill="none" stroke="${colors[name]}" stroke-width="2" points="${pts}"/>`);
  }
  Object.keys(runs).forEach((name, i) => parts.push(`<text x="${L + 10}" y="${30 + 15 * i}" font-size="11" fill="${colors[name]}">${name}</text>`));
  for (const ms of [10, 100, 1000, 10000]) if (ms <= max) parts.push(`<text x="${x(ms)}" y="${H - B + 16}" font-size="10" text-anchor="middle">${ms} ms</text>`);
  parts.push(`<line x1="${L}" y1="${H - B}" x2="${right - 10}" y2="${H - B}" stroke="#333"/><line x1="${L}" y1="20" x2="${L}" y2="${H - B}" stroke="#333"/>`);
  parts.push(`<text x="${right / 2}" y="${H - 6}" font-size="12" text-anchor="middle">TTFT (log scale)</text><text x="14" y="${H / 2}" font-size="12" transform="rotate(-90 14 ${H / 2})" text-anchor="middle">CDF</text>`);
  return parts;
}

/** The SVG document around `parts`. */
export function svgDocument(W, H, parts) {
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif"><rect width="100%" height="100%" fill="white"/>${parts.join('')}</svg>\n`;
}
