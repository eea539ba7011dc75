import { ListModelRecordsRequestSchema, RegisterModelRequestSchema, Subjects } from '@mnemo/proto';
import { profilerUnderTest, uniqueId } from './profiler-test.client.js';

describe('profiler model registry over NATS', () => {
  const profiler = profilerUnderTest();

  const register = (init: { id: string; architecture: string; numLayers: number; baseModelId?: string }) =>
    profiler.client.request(Subjects.PROFILER_MODELS_REGISTER, RegisterModelRequestSchema, init);
  const listIds = async () => {
    const r = await profiler.client.request(Subjects.PROFILER_MODELS_LIST, ListModelRecordsRequestSchema, {});
    if (r.case !== 'models') throw new Error(`expected models, got ${r.case}`);
    return r.value.models;
  };

  it('registers a base and a derived model and lists them', async () => {
    const base = uniqueId('llama-base');
    const derived = uniqueId('llama-chat');
    const before = Date.now();

    const a = await register({ id: base, architecture: 'llama', numLayers: 4 });
    const b = await register({ id: derived, architecture: 'llama', numLayers: 4, baseModelId: base });

    expect(a).toMatchObject({ case: 'model', value: { id: base, architecture: 'llama', numLayers: 4, baseModelId: '' } });
    expect(b).toMatchObject({ case: 'model', value: { id: derived, baseModelId: base } });
    expect(a.case === 'model' && a.value.createdAtUnixMs).toBeGreaterThan(before - 60_000);
    const listed = await listIds();
    expect(listed.find((m) => m.id === base)).toMatchObject({ architecture: 'llama', numLayers: 4, baseModelId: '' });
    expect(listed.find((m) => m.id === derived)).toMatchObject({ baseModelId: base });
  });

  it('re-registering an identical record is idempotent', async () => {
    const id = uniqueId('tiny');
    const first = await register({ id, architecture: 'llama', numLayers: 2 });
    const again = await register({ id, architecture: 'llama', numLayers: 2 });

    expect(again).toEqual(first);
    expect((await listIds()).filter((m) => m.id === id)).toHaveLength(1);
  });

  it('the same id with other attributes is a conflict and changes nothing', async () => {
    const id = uniqueId('tiny');
    await register({ id, architecture: 'llama', numLayers: 2 });

    const r = await register({ id, architecture: 'llama', numLayers: 3 });

    expect(r).toMatchObject({ case: 'error', value: { code: 'conflict' } });
    expect((await listIds()).find((m) => m.id === id)).toMatchObject({ numLayers: 2 });
  });

  it('an unknown base is not_found and registers nothing', async () => {
    const id = uniqueId('orphan');
    const r = await register({ id, architecture: 'llama', numLayers: 2, baseModelId: uniqueId('missing') });

    expect(r).toMatchObject({ case: 'error', value: { code: 'not_found' } });
    expect((await listIds()).some((m) => m.id === id)).toBe(false);
  });

  it('a base of another architecture or depth is invalid_request', async () => {
    const base = uniqueId('mistral');
    await register({ id: base, architecture: 'mistral', numLayers: 4 });

    const otherArch = await register({ id: uniqueId('d'), architecture: 'llama', numLayers: 4, baseModelId: base });
    const otherDepth = await register({ id: uniqueId('d'), architecture: 'mistral', numLayers: 8, baseModelId: base });

    expect(otherArch).toMatchObject({ case: 'error', value: { code: 'invalid_request' } });
    expect(otherDepth).toMatchObject({ case: 'error', value: { code: 'invalid_request' } });
  });

  it.each([
    ['an empty id', { id: '', architecture: 'llama', numLayers: 2 }],
    ['an id with spaces', { id: 'a b', architecture: 'llama', numLayers: 2 }],
    ['no architecture', { id: 'x', architecture: '', numLayers: 2 }],
    ['zero layers', { id: 'x', architecture: 'llama', numLayers: 0 }],
    ['itself as base', { id: 'self', architecture: 'llama', numLayers: 2, baseModelId: 'self' }],
  ])('rejects %s with invalid_request', async (_name, init) => {
    expect(await register(init)).toMatchObject({ case: 'error', value: { code: 'invalid_request' } });
  });

  it('answers malformed protobuf with invalid_request', async () => {
    const r = await profiler.client.requestRaw(Subjects.PROFILER_MODELS_REGISTER, new Uint8Array([0xff, 0xff, 0xff]));
    expect(r).toMatchObject({ case: 'error', value: { code: 'invalid_request' } });
  });

  it('is ready and counts outcomes in /metrics', async () => {
    await register({ id: uniqueId('m'), architecture: 'llama', numLayers: 2, baseModelId: uniqueId('missing') });

    const ready = await fetch(`http://127.0.0.1:${profiler.sut.metricsPort}/readyz`);
    const metrics = await (await fetch(`http://127.0.0.1:${profiler.sut.metricsPort}/metrics`)).text();

    expect(ready.status).toBe(200);
    expect(metrics).toMatch(/mnemo_requests_total\{[^}]*operation="models\.register"[^}]*outcome="not_found"[^}]*\} [1-9]/);
  });
});
