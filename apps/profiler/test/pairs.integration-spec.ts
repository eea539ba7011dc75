import { ListModelPairsRequestSchema, RegisterModelPairRequestSchema, RegisterModelRequestSchema, Subjects } from '@mnemo/proto';
import { profilerUnderTest, uniqueId } from './profiler-test.client.js';

describe('profiler model pairs over NATS', () => {
  const profiler = profilerUnderTest();

  const model = async (architecture: string, numLayers = 4) => {
    const id = uniqueId(architecture);
    const r = await profiler.client.request(Subjects.PROFILER_MODELS_REGISTER, RegisterModelRequestSchema, { id, architecture, numLayers });
    if (r.case !== 'model') throw new Error(`register failed: ${JSON.stringify(r.value)}`);
    return id;
  };
  const pair = (base: string, derived: string) =>
    profiler.client.request(Subjects.PROFILER_PAIRS_REGISTER, RegisterModelPairRequestSchema, { base, derived });
  const pairsOf = async (base: string) => {
    const r = await profiler.client.request(Subjects.PROFILER_PAIRS_LIST, ListModelPairsRequestSchema, { base });
    if (r.case !== 'pairs') throw new Error(`expected pairs, got ${r.case}`);
    return r.value.pairs.map((p) => [p.base, p.derived]);
  };

  it('registers base → derived and lists it, filtered by base', async () => {
    const [base, d1, d2, other] = [await model('llama'), await model('llama'), await model('llama'), await model('llama')];

    const r = await pair(base, d1);
    await pair(base, d2);
    await pair(other, d1);

    expect(r).toMatchObject({ case: 'pair', value: { base, derived: d1 } });
    expect(r.case === 'pair' && r.value.createdAtUnixMs).toBeGreaterThan(0);
    expect(await pairsOf(base)).toEqual([
      [base, d1],
      [base, d2],
    ]);
    const all = await profiler.client.request(Subjects.PROFILER_PAIRS_LIST, ListModelPairsRequestSchema, {});
    expect(all.case === 'pairs' && all.value.pairs.map((p) => [p.base, p.derived])).toEqual(
      expect.arrayContaining([
        [base, d1],
        [base, d2],
        [other, d1],
      ]),
    );
  });

  it('a duplicate pair is a conflict', async () => {
    const [base, derived] = [await model('llama'), await model('llama')];
    await pair(base, derived);

    expect(await pair(base, derived)).toMatchObject({ case: 'error', value: { code: 'conflict' } });
    expect(await pairsOf(base)).toEqual([[base, derived]]);
  });

  it('an unknown model on either side is not_found and stores nothing', async () => {
    const known = await model('llama');
    const missing = uniqueId('missing');

    expect(await pair(missing, known)).toMatchObject({ case: 'error', value: { code: 'not_found' } });
    expect(await pair(known, missing)).toMatchObject({ case: 'error', value: { code: 'not_found' } });
    expect(await pairsOf(known)).toEqual([]);
  });

  it('models of different architecture or depth are invalid_request', async () => {
    const llama = await model('llama', 4);

    expect(await pair(llama, await model('mistral', 4))).toMatchObject({ case: 'error', value: { code: 'invalid_request' } });
    expect(await pair(llama, await model('llama', 6))).toMatchObject({ case: 'error', value: { code: 'invalid_request' } });
    expect(await pairsOf(llama)).toEqual([]);
  });

  it.each([
    ['a model paired with itself', 'same', 'same'],
    ['no base', '', 'x'],
    ['no derived', 'x', ''],
  ])('rejects %s with invalid_request', async (_name, base, derived) => {
    expect(await pair(base, derived)).toMatchObject({ case: 'error', value: { code: 'invalid_request' } });
  });
});
