import { GPUS, kvBytesPerToken, MODELS } from './hardware.tables.js';
import { layerwisePrefillMs } from './layerwise.load.js';
import { activationBytesPerToken, kvBudgetBytes, maxContextAlone } from './memory.budget.js';

const GB = 1e9;
const lwm = MODELS['lwm-7b'];

describe('memory budget', () => {
  it.each([
    // 2 · (2·4096 + (4096 + 2·32·128) + 4096 + 3·11008) = 115,200 bytes
    ['lwm-7b', 115_200],
    // 2 · (2·4096 + (4096 + 2·8·128) + 4096 + 3·12288) = 110,592 bytes
    ['qwen3-8b', 110_592],
  ] as const)('%s holds %d activation bytes per prefilled token', (name, bytes) => {
    expect(activationBytesPerToken(MODELS[name])).toBe(bytes);
  });

  it('refuses a model with no MLP width in the tables', () => {
    expect(() => activationBytesPerToken(MODELS['llama-3.1-8b'])).toThrow(RangeError);
  });

  it.each([
    { name: '96 GB, 8K chunk', mem: 96 * GB, chunk: 8192 },
    { name: '24 GB, 32K chunk', mem: 24 * GB, chunk: 32_768 },
  ])('charges 90% of memory less weights and the chunk activation ($name)', ({ mem, chunk }) => {
    expect(kvBudgetBytes(mem, lwm, chunk)).toBe(Math.floor(mem * 0.9 - lwm.params * 2 - chunk * activationBytesPerToken(lwm)));
  });

  it('serves nothing where the weights and activation take the memory', () => {
    expect(kvBudgetBytes(16 * GB, lwm, 8192)).toBe(0);
    expect(maxContextAlone(16 * GB, lwm, 8192)).toBe(0);
  });

  it('holds a longer context with a smaller chunk, and without chunking the least', () => {
    const [c8, c32, none] = [8192, 32_768, null].map((c) => maxContextAlone(GPUS.H20.memBytes, lwm, c));
    expect(c8).toBeGreaterThan(c32!);
    expect(c32).toBeGreaterThan(none!);
    expect(c8! % 16).toBe(0);
    expect(c8).toBe(Math.floor(kvBudgetBytes(96 * GB, lwm, 8192) / kvBytesPerToken(lwm) / 16) * 16);
    // Without chunking the prompt's own activation grows with it: N · (KV + activation) fits.
    expect(none! * (kvBytesPerToken(lwm) + activationBytesPerToken(lwm))).toBeLessThanOrEqual(kvBudgetBytes(96 * GB, lwm, 0));
  });
});

describe(layerwisePrefillMs.name, () => {
  it.each([
    { name: 'no load: compute alone', layers: 4, load: 0, compute: 2, start: 0, want: 8 },
    { name: 'load-bound: the last load then one compute', layers: 4, load: 3, compute: 1, start: 0, want: 13 },
    { name: 'compute-bound: the first load then every compute', layers: 4, load: 1, compute: 3, start: 0, want: 13 },
    { name: 'loads issued early hide the first', layers: 4, load: 1, compute: 3, start: -1, want: 12 },
  ])('$name', ({ layers, load, compute, start, want }) => {
    expect(layerwisePrefillMs(layers, load, compute, start)).toBe(want);
  });

  it('refuses a model with no layers', () => {
    expect(() => layerwisePrefillMs(0, 1, 1)).toThrow(RangeError);
  });
});
