import { sseData } from './sse.events.js';

/** A body delivering `parts` as separate reads. */
const body = (...parts: string[]) =>
  new ReadableStream<Uint8Array>({
    start(c) {
      for (const p of parts) c.enqueue(new TextEncoder().encode(p));
      c.close();
    },
  });

async function all(b: ReadableStream<Uint8Array>): Promise<string[]> {
  const out: string[] = [];
  for await (const d of sseData(b)) out.push(d);
  return out;
}

describe(sseData.name, () => {
  it.each<[string, string[], string[]]>([
    ['one event per blank line', ['data: {"a":1}\n\ndata: [DONE]\n\n'], ['{"a":1}', '[DONE]']],
    ['an event split across reads', ['data: {"a"', ':1}\n', '\ndata: x\n\n'], ['{"a":1}', 'x']],
    ['a trailing partial event is not yielded', ['data: a\n\ndata: b'], ['a']],
  ])('%s', async (_name, parts, want) => {
    expect(await all(body(...parts))).toEqual(want);
  });

  it('a multi-byte character split across reads', async () => {
    const bytes = new TextEncoder().encode('data: é\n\n');
    const b = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(bytes.slice(0, 7));
        c.enqueue(bytes.slice(7));
        c.close();
      },
    });
    expect(await all(b)).toEqual(['é']);
  });
});
