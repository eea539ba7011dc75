import { SERVING_SYSTEMS, type ServingSystem } from '@mnemo/kv-core';
import { Distribution } from '../core/distribution.js';
import { summarizeRun } from '../report/run.summary.js';
import { measured, sessions, setup } from '../../test/multiround.fixture.js';
import { multiroundCluster, type MeasuredCosts } from './multiround.scenario.js';
import { TwinCluster } from './twin.cluster.js';

const runs = new Map<string, ReturnType<typeof fresh>>();
function fresh(system: ServingSystem, seed: number) {
  const c = new TwinCluster(multiroundCluster(setup, system, measured, { seed, tenant: 'spec' }), sessions);
  c.run();
  return { c, s: summarizeRun(c) };
}
/** One run per (system, seed), shared by the tests. */
function run(system: ServingSystem, seed = 1) {
  const k = `${system.models}/${seed}`;
  if (!runs.has(k)) runs.set(k, fresh(system, seed));
  return runs.get(k)!;
}

describe(TwinCluster.name, () => {
  it('runs every turn of every session once, and is a pure function of its seed', () => {
    const a = run(SERVING_SYSTEMS.symphony);
    expect(a.s.requests).toBe(12 * 3);
    expect(a.s.failed).toBe(0);
    expect(fresh(SERVING_SYSTEMS.symphony, 1).c.users.results).toEqual(a.c.users.results);
    expect(run(SERVING_SYSTEMS.symphony, 2).c.users.results).not.toEqual(a.c.users.results);
  });

  it('splits TTFT as the live benchmark does: on the node, and the NATS hops outside it', () => {
    const t = run(SERVING_SYSTEMS.recompute).s.time_on_node;
    // Outside the nodes: client → scheduler, scheduler → node, first token → client, each a NATS draw (0.3–2 ms here).
    expect(t.outside_nodes_mean_ms).toBeGreaterThanOrEqual(3 * 0.3);
    expect(t.outside_nodes_mean_ms).toBeLessThanOrEqual(3 * 2);
    expect(t.ttft_mean_ms!).toBeGreaterThan(t.queue_mean_ms!);
    expect(t.queue_mean_ms).toBeGreaterThanOrEqual(0);
  });

  it("splits TTFT by where a turn ran against its session's previous turn, as the live benchmark does", () => {
    const m = run(SERVING_SYSTEMS.llmd).s.by_move;
    expect(m.first.requests).toBe(12);
    expect(m.first.requests + m.stayed.requests + m.moved.requests).toBe(12 * 3);
    // InferCept is sticky: no turn leaves its session's node.
    expect(run(SERVING_SYSTEMS.infercept).s.by_move.moved.requests).toBe(0);
  });

  it('charges a timed request path whole in place of its parts: the path outside the nodes is what was measured', () => {
    // A path of 9 ms, longer than anything its parts could add up to here (three hops of at most 2 ms).
    const timed: MeasuredCosts = { ...measured, overheads: { ...measured.overheads, requestPathMs: Distribution.constant(9) } };
    const c = new TwinCluster(multiroundCluster(setup, SERVING_SYSTEMS.recompute, timed, { seed: 1, tenant: 'spec' }), sessions);
    c.run();
    const t = summarizeRun(c).time_on_node;
    expect(t.outside_nodes_mean_ms).toBeCloseTo(9, 6);
    expect(run(SERVING_SYSTEMS.recompute).s.time_on_node.outside_nodes_mean_ms).toBeLessThan(6);
  });

  it("routes by each system's policy (kv-core route reasons) and reuses the sessions' KV", () => {
    const sym = run(SERVING_SYSTEMS.symphony).s;
    expect(Object.keys(sym.routing).sort()).toEqual(expect.arrayContaining(['cheapest']));
    expect(sym.reservations.advisories).toBeGreaterThan(0);
    expect(Object.keys(run(SERVING_SYSTEMS.recompute).s.routing)).toEqual(['least_loaded']);
    expect(Object.keys(run(SERVING_SYSTEMS.llmd).s.routing)).toEqual(['scored']);
    expect(sym.prefix_hit_rate).toBeGreaterThan(0.5);
  });

  it('InferCept keeps nothing on the device between turns: its turns come back from host memory', () => {
    const s = run(SERVING_SYSTEMS.infercept).s;
    expect(s.restored_tokens.from_local_tiers).toBeGreaterThan(0);
    expect(s.routing).toMatchObject({ session_home: expect.any(Number) });
  });
});
