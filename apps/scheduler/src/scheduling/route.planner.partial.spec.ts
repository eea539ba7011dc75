import { chunkBlockKeys, chunkKeys } from '@mnemo/kv-core';
import { chunkedRequest, nodeEntry, plannerFor } from '../../test/route-planner.fixture.js';
import { RoutePlanner } from './route.planner.js';

const MODEL = 'm';
// 600 tokens: two whole chunks, then 88 tokens (5 full blocks) of chunk 2.
const tokens = Array.from({ length: 600 }, (_, i) => (i * 5) % 250);
const keys = chunkKeys(MODEL, 't', tokens);
const partial = (blocks: number) => chunkBlockKeys(MODEL, 't', tokens, keys, 2)[blocks - 1]!;

function setup(policy: string, env: Record<string, string> = {}) {
  const nodes = [nodeEntry('home', { models: [MODEL], waiting: 6 }), nodeEntry('idle', { models: [MODEL] })];
  return plannerFor(nodes, { env: { SCHEDULER_POLICY: policy, ...env }, service: 'planner-partial-test' });
}
const request = () => chunkedRequest('r', MODEL, tokens);

describe(`${RoutePlanner.name} (partial chunks)`, () => {
  it('a request moved off a busy node is sent its whole chunks and the longest partial chunk that node holds', () => {
    const { sut, directory } = setup('symphony');
    directory.apply('home', [{ kind: 'stored', tier: 'host', keys: [...keys, partial(2), partial(4)] }]);
    const plan = sut.plan(request(), new Set())!;
    expect(plan.nodeId).toBe('idle');
    expect(plan.kvSources).toEqual([{ nodeId: 'home', chunkKeys: [...keys, partial(4)] }]);
    expect(plan.kvSourceAddresses.get('home')).toBe('home:7000');
  });

  it('nothing is added when the chosen node holds the partial chunk itself', () => {
    const { sut, directory } = setup('symphony');
    directory.apply('home', [{ kind: 'stored', tier: 'host', keys }]);
    directory.apply('idle', [{ kind: 'stored', tier: 'ssd', keys: [partial(4)] }]);
    expect(sut.plan(request(), new Set())!.kvSources.flatMap((s) => s.chunkKeys)).not.toContain(partial(4));
  });

  it.each([
    ['a baseline policy', 'prefix-affinity', {}],
    ['symphony without peer fetch', 'symphony', { SCHEDULER_PEER_FETCH: 'off' }],
  ])('%s sends none', (_name, policy, env) => {
    const { sut, directory } = setup(policy, env);
    directory.apply('home', [{ kind: 'stored', tier: 'host', keys: [partial(4)] }]);
    expect(sut.plan(request(), new Set())!.kvSources).toEqual([]);
  });
});
