// Where an advisory reserves: the node the request should start on when it arrives, seconds
// later — so a prefill backlog that will have drained by then does not move the session — and
// the prefetch it sends names the peers for that node, whatever the other nodes' load.
import { nodeEntry, plannerFor, silentLogger } from '../../test/route-planner.fixture.js';
import type { NodeEntry } from '../nodes/node.registry.js';
import type { ForgetInit, NodePrefetcher, PrefetchInit, PrefetchOutcome } from '../sessions/node-prefetch.port.js';
import { AdviseCommand } from './advise.command.js';
import { AdviseUseCase } from './advise.use-case.js';

/** Port double: records what each node was asked to prefetch. */
class RecordingPrefetcher implements NodePrefetcher {
  readonly prefetches: Array<{ nodeId: string; request: PrefetchInit }> = [];
  async prefetch(nodeId: string, request: PrefetchInit): Promise<PrefetchOutcome> {
    this.prefetches.push({ nodeId, request });
    return { kind: 'queued', chunks: 0 };
  }
  async forget(_nodeId: string, _r: ForgetInit): Promise<PrefetchOutcome> {
    return { kind: 'queued', chunks: 0 };
  }
}

const KEYS = ['k0', 'k1', 'k2'];

function setup(nodes: NodeEntry[]) {
  const t = plannerFor(nodes, { env: { SCHEDULER_POLICY: 'symphony' }, sessions: 100, reservations: 100, service: 'scheduler-test' });
  const { registry, sessions, directory } = t;
  const prefetcher = new RecordingPrefetcher();
  const sut = new AdviseUseCase(sessions, t.book, t.sut, registry, prefetcher, () => 'adv-1', t.config, t.metrics, t.clock, silentLogger());
  // The session's last request ran on a, which keeps its chunks on host.
  sessions.record({ tenant: 't', sessionId: 's', model: 'm', nodeId: 'a', chunkKeys: KEYS, promptTokens: 3 * 256, lastUsedMs: Date.now() });
  directory.apply('a', [{ kind: 'stored', tier: 'host', keys: KEYS }]);
  return { sut, registry, prefetcher };
}

describe(AdviseUseCase.name, () => {
  it.each([
    ['due in 5 s, after the backlog drains: stays on its home', 5_000, 'a'],
    ['due now, behind the backlog: reserved where it starts first', 0, 'b'],
  ])('a home with 400 ms of prefill backlog: %s', (_name, aheadMs, expected) => {
    const { sut, registry, prefetcher } = setup([nodeEntry('a'), nodeEntry('b')]);
    registry.addBacklog('a', 400, Date.now());
    const r = sut.execute(new AdviseCommand('t', 's', 'm', aheadMs > 0 ? Date.now() + aheadMs : 0, false, 0));
    expect(r.nodeId).toBe(expected);
    expect(prefetcher.prefetches.map((p) => p.nodeId)).toEqual([expected]);
  });

  it('the prefetch names where the reserved node pulls the session’s chunks from', () => {
    const { sut, prefetcher } = setup([nodeEntry('a', { waiting: 6 }), nodeEntry('b', { waiting: 2 }), nodeEntry('c')]);
    // a's queue outweighs its chunks: another node is reserved and pulls them from a.
    const r = sut.execute(new AdviseCommand('t', 's', 'm', 0, false, 0));
    const sources = prefetcher.prefetches[0]!.request.sources!.map((s) => ({ nodeId: s.nodeId, chunkKeys: s.chunkKeys }));
    expect(prefetcher.prefetches[0]!.nodeId).toBe(r.nodeId);
    expect(r.nodeId).not.toBe('a');
    expect(sources).toEqual([{ nodeId: 'a', chunkKeys: KEYS }]);
  });
});
