/**
 * A strict-enough XML well-formedness check for the SVG we render (no parser ships in
 * the repo): every tag closes in order, attributes are quoted, entities are known.
 * Returns the elements as { name, attrs } in document order.
 */
export function parseSvg(svg: string): Array<{ name: string; attrs: Record<string, string> }> {
  const out: Array<{ name: string; attrs: Record<string, string> }> = [];
  const stack: string[] = [];
  const tag = /<(\/?)([A-Za-z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>/g;
  let last = 0;
  for (let m = tag.exec(svg); m; m = tag.exec(svg)) {
    const text = svg.slice(last, m.index);
    if (/<|&(?!(amp|lt|gt|quot|#\d+);)/.test(text)) throw new Error(`bad text before offset ${m.index}: ${text.slice(0, 40)}`);
    last = tag.lastIndex;
    const [, close, name, rawAttrs, selfClose] = m;
    if (close) {
      if (stack.pop() !== name) throw new Error(`</${name}> closes the wrong element at ${m.index}`);
      continue;
    }
    const attrs: Record<string, string> = {};
    for (const a of rawAttrs!.matchAll(/([\w:-]+)="([^"]*)"/g)) attrs[a[1]!] = a[2]!;
    out.push({ name: name!, attrs });
    if (!selfClose) stack.push(name!);
  }
  if (stack.length > 0 || svg.slice(last).trim() !== '') throw new Error(`unclosed elements: ${stack.join(', ')}`);
  if (out[0]?.name !== 'svg') throw new Error('root element is not <svg>');
  return out;
}
