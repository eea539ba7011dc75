import { ErrorCode, ReservationBook, SessionTable } from '@mnemo/kv-core';
import { ServiceMetrics, systemClock } from '@mnemo/service-kit';
import { nodeEntry, silentLogger } from '../../test/route-planner.fixture.js';
import { NodeRegistry } from '../nodes/node.registry.js';
import { SchedulerMetrics } from '../shared/scheduler.metrics.js';
import { DeleteSessionUseCase } from './delete-session.use-case.js';
import type { ForgetInit, NodePrefetcher, PrefetchOutcome } from './node-prefetch.port.js';
import { SessionCommand } from './session.command.js';

/** Port double: each node answers a forget from a table (a missing node answers nothing in time). */
class ScriptedForgets implements NodePrefetcher {
  readonly told: string[] = [];
  constructor(private readonly answers: Record<string, PrefetchOutcome>) {}
  async prefetch(): Promise<PrefetchOutcome> {
    return { kind: 'unavailable' };
  }
  async forget(nodeId: string, r: ForgetInit): Promise<PrefetchOutcome> {
    this.told.push(`${nodeId}:${r.sessionId}`);
    return this.answers[nodeId] ?? { kind: 'timeout' };
  }
}

function setup(answers: Record<string, PrefetchOutcome>) {
  const registry = new NodeRegistry();
  for (const nodeId of ['a', 'b', 'c']) registry.upsert(nodeEntry(nodeId, { grpcAddress: '' }));
  const sessions = new SessionTable(10);
  sessions.record({ tenant: 't', sessionId: 's', model: 'm', nodeId: 'a', chunkKeys: [], lastUsedMs: 0 });
  const nodes = new ScriptedForgets(answers);
  const metrics = new SchedulerMetrics(new ServiceMetrics('scheduler-test'));
  const book = new ReservationBook({ perTenant: 4, total: 8 });
  const sut = new DeleteSessionUseCase(sessions, book, nodes, registry, metrics, systemClock, silentLogger());
  return { sut, nodes, sessions };
}

describe(DeleteSessionUseCase.name, () => {
  it.each<[string, Record<string, PrefetchOutcome>, number]>([
    [
      'sums what every node freed',
      { a: { kind: 'queued', chunks: 2 }, b: { kind: 'queued', chunks: 3 }, c: { kind: 'queued', chunks: 0 } },
      5,
    ],
    [
      'counts nothing for a node that timed out or refused',
      { a: { kind: 'queued', chunks: 4 }, c: { kind: 'refused', code: 'internal' } },
      4,
    ],
    ['reports 0 when no node has a handler', { a: { kind: 'unavailable' }, b: { kind: 'unavailable' }, c: { kind: 'unavailable' } }, 0],
  ])('%s', async (_name, answers, freed) => {
    const { sut, nodes, sessions } = setup(answers);
    await expect(sut.execute(new SessionCommand('t', 's'))).resolves.toEqual({ found: true, freedChunks: freed, nodesTold: 3 });
    expect(nodes.told.sort()).toEqual(['a:s', 'b:s', 'c:s']);
    expect(sessions.get('t', 's')).toBeUndefined();
  });

  it('answers an unknown session with not_found and tells no node', async () => {
    const { sut, nodes } = setup({});
    await expect(sut.execute(new SessionCommand('t', 'nobody'))).rejects.toMatchObject({ code: ErrorCode.NotFound });
    expect(nodes.told).toEqual([]);
  });
});
