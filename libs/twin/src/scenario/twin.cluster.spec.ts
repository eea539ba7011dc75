import { SERVING_SYSTEMS, type ServingSystem } from '@mnemo/kv-core';
import { DEFAULT_SIM_COST } from '@mnemo/engine';
import { Distribution } from '../core/distribution.js';
import { NO_OVERHEADS } from '../costs/overhead.port.js';
import { summarizeRun } from '../report/run.summary.js';
import type { TwinSession } from '../workload/session.workload.js';
import { multiroundCluster, type MeasuredCosts, type MultiroundSetup } from './multiround.scenario.js';
import { TwinCluster } from './twin.cluster.js';

const text = (n: number, salt: number) => Array.from({ length: n }, (_, i) => (i * 37 + salt * 101 + 7) % 250);
const sessions: TwinSession[] = Array.from({ length: 12 }, (_, s) => ({
  id: `s${s}`,
  system: text(300, 1),
  doc: text(s % 3 === 0 ? 900 : 0, 1000 + s),
  turns: Array.from({ length: 3 }, (_, t) => ({
    user: text(30 + ((s * 7 + t) % 40), s * 100 + t),
    reply: 20,
    readMs: 150,
    typeMs: 300,
    r: ((s * 13 + t * 7) % 100) / 100,
  })),
}));

const setup: MultiroundSetup = {
  nodes: 3,
  model: 'mnemo-medium',
  kvBlocks: 512,
  maxBatch: 8,
  maxContext: 16384,
  hostPoolBytes: 8 << 20,
  ssdPoolBytes: 16 << 20,
  heartbeatMs: 200,
  bandwidths: { host: 10, ssd: 2 },
  kvLayers: 8,
  kvBytesPerToken: 256,
  compute: {
    ...DEFAULT_SIM_COST,
    prefillPerTokenMs: 0.08,
    decodeBaseMs: 12,
    decodePerSeqMs: 0.1,
    decodePerKContextMs: 0.076,
    restorePerChunkMs: 2.8,
  },
  routing: { queueMsPerRequest: 40, moveMarginMs: 40, hostMsPerChunk: 1.4, ssdMsPerChunk: 5.5, peerMsPerChunk: 2.7 },
  users: 6,
  rampMs: 500,
};
const link = { dispatchMs: 0.2, bytesPerMs: 1e5 };
const measured: MeasuredCosts = {
  links: { hostLoad: link, peer: { dispatchMs: 3, bytesPerMs: 1e4 }, ssdRead: link, hostWrite: link, ssdWrite: link },
  overheads: { ...NO_OVERHEADS, natsMs: new Distribution([0.3, 0.5, 2]), timerLagMs: new Distribution([0.1, 1, 3]) },
};

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
