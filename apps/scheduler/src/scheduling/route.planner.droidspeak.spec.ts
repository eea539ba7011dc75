import { chunkKeys, eCacheKeys } from '@mnemo/kv-core';
import { chunkedRequest, nodeEntry, plannerFor } from '../../test/route-planner.fixture.js';
import { DerivedPairsRegistry } from '../droidspeak/derived-pairs.registry.js';
import { RoutePlanner } from './route.planner.js';

const BASE = 'b-model';
const DERIVED = 'd-model';
const tokens = Array.from({ length: 600 }, (_, i) => (i * 5) % 250);
const baseKeys = chunkKeys(BASE, 't', tokens);
const ownKeys = chunkKeys(DERIVED, 't', tokens);

function setup(pairs: DerivedPairsRegistry) {
  const models = [BASE, DERIVED];
  return plannerFor([nodeEntry('busy', { models, waiting: 3 }), nodeEntry('idle', { models })], { pairs });
}
const request = () => chunkedRequest('r', DERIVED, tokens);

describe(`${RoutePlanner.name} (DroidSpeak)`, () => {
  it("routes a derived request on its base's chunks and stamps the peer holding them, with its E-cache keys", () => {
    const pairs = new DerivedPairsRegistry(new Map([[DERIVED, BASE]]));
    pairs.frontierUpdated(BASE, DERIVED, [{ pattern: { r1: 0, u1: 2, r2: 4 } }]);
    const { sut, directory } = setup(pairs);
    const eKeys = eCacheKeys(baseKeys, 2);
    directory.apply('busy', [{ kind: 'stored', tier: 'host', keys: [...baseKeys, ...eKeys] }]);
    const plan = sut.plan(request(), new Set())!;
    expect(plan.nodeId).toBe('idle');
    expect(plan.kvSources).toEqual([{ nodeId: 'busy', chunkKeys: [...baseKeys, ...eKeys] }]);
  });

  it('without a known pair the base is not looked up: no kv_sources', () => {
    const { sut, directory } = setup(new DerivedPairsRegistry());
    directory.apply('busy', [{ kind: 'stored', tier: 'host', keys: baseKeys }]);
    expect(sut.plan(request(), new Set())!.kvSources).toEqual([]);
  });

  it("the derived model's own chunks win when they reach as far", () => {
    const pairs = new DerivedPairsRegistry(new Map([[DERIVED, BASE]]));
    const { sut, directory } = setup(pairs);
    directory.apply('busy', [{ kind: 'stored', tier: 'host', keys: baseKeys }]);
    directory.apply('idle', [{ kind: 'stored', tier: 'host', keys: ownKeys }]);
    const plan = sut.plan(request(), new Set())!;
    expect(plan.nodeId).toBe('idle');
    expect(plan.kvSources).toEqual([]);
  });

  it('learns a pair from a FrontierUpdated notice alone', () => {
    const pairs = new DerivedPairsRegistry();
    pairs.frontierUpdated(BASE, DERIVED, []);
    const { sut, directory } = setup(pairs);
    directory.apply('busy', [{ kind: 'stored', tier: 'host', keys: baseKeys }]);
    expect(sut.plan(request(), new Set())!.kvSources).toEqual([{ nodeId: 'busy', chunkKeys: baseKeys }]);
  });
});
