import { Inject, Injectable, Optional } from '@nestjs/common';
import {
  CHUNK_TOKENS,
  isChunkKey,
  type DirectoryChange,
  type DirectoryTier,
  type ExpectedHoldings,
  type KvDirectory,
  type SessionTable,
} from '@mnemo/kv-core';
import { isSubjectToken, KvChangeKind, KvTier, type KvChange, type SessionTail } from '@mnemo/proto';
import { CLOCK, JsonLogger, systemClock, type Clock } from '@mnemo/service-kit';
import { SESSION_TABLE } from '../sessions/session-table.provider.js';
import { SchedulerMetrics } from '../shared/scheduler.metrics.js';
import { EXPECTED_HOLDINGS, KV_DIRECTORY, KV_REPORT_REQUESTER, type KvReportRequester } from './kv-report.port.js';
import type { RecordKvEventCommand } from './record-kv-event.command.js';

/** A report not received this long after it was asked for is asked for again. */
export const REPORT_RETRY_MS = 5_000;

const TIERS: Partial<Record<KvTier, DirectoryTier>> = { [KvTier.DEVICE]: 'device', [KvTier.HOST]: 'host', [KvTier.SSD]: 'ssd' };
const KINDS: Partial<Record<KvChangeKind, DirectoryChange['kind']>> = {
  [KvChangeKind.STORED]: 'stored',
  [KvChangeKind.REMOVED]: 'removed',
  [KvChangeKind.TRUNCATED]: 'truncated',
};

/**
 * Folds a node's KV event into the directory. Diffs are only trusted in sequence: the first
 * event seen from a node (a scheduler restart, a node we just met) or a gap in `seq` means our
 * view may be missing changes, so the diff is applied (better than nothing) and a full report
 * is asked for; the report then replaces the node's whole entry. What the node stores confirms
 * what routing expected it to hold, and what it drops takes the expectation with it.
 */
@Injectable()
export class RecordKvEventUseCase {
  private readonly lastSeq = new Map<string, bigint>();
  /**
   * Nodes asked for a report and not answered yet, with when they were asked: one request per
   * gap, not one per event — but a request or its report can be lost (NATS restarting), so a
   * node still unanswered after REPORT_RETRY_MS is asked again at its next event or rejoin.
   */
  private readonly awaitingReport = new Map<string, number>();

  constructor(
    @Inject(KV_DIRECTORY) private readonly directory: KvDirectory,
    @Inject(KV_REPORT_REQUESTER) private readonly reports: KvReportRequester,
    @Inject(SchedulerMetrics) private readonly metrics: SchedulerMetrics,
    @Inject(JsonLogger) private readonly logger: JsonLogger,
    @Inject(SESSION_TABLE) private readonly sessions: SessionTable,
    @Optional() @Inject(EXPECTED_HOLDINGS) private readonly expected: ExpectedHoldings | null = null,
    @Optional() @Inject(CLOCK) private readonly clock: Clock = systemClock,
  ) {}

  execute({ event }: RecordKvEventCommand): void {
    if (!isSubjectToken(event.nodeId)) {
      this.logger.emit('warn', 'KV event with an invalid node id ignored', { nodeId: event.nodeId });
      return;
    }
    const changes = event.changes.flatMap(toDirectoryChange);
    const last = this.lastSeq.get(event.nodeId);
    this.lastSeq.set(event.nodeId, event.seq);
    this.metrics.kvEvents.inc({ kind: event.full ? 'report' : 'diff' });
    this.settleExpected(event.nodeId, changes, event.full);
    if (event.full) {
      this.awaitingReport.delete(event.nodeId);
      this.directory.replaceNode(event.nodeId, changes);
      return;
    }
    this.directory.apply(event.nodeId, changes);
    if (last === undefined || event.seq !== last + 1n) this.askReport(event.nodeId, last === undefined ? 'unknown' : 'gap');
    else if (this.awaitingReport.has(event.nodeId)) this.askReport(event.nodeId, 'retry');
    for (const t of event.sessionTails) this.recordTail(event.nodeId, t);
  }

  /** Stored keys are the directory's now; removed or truncated ones are not coming (a full report only lists what is stored). */
  private settleExpected(nodeId: string, changes: readonly DirectoryChange[], full: boolean): void {
    if (!this.expected) return;
    for (const c of changes) {
      if (c.kind === 'stored') this.expected.confirm(nodeId, c.keys);
      else if (!full) this.expected.remove(nodeId, c.keys);
    }
  }

  /** What a session's request left on the node (after the directory took in the same event's chunks). */
  private recordTail(nodeId: string, t: SessionTail): void {
    if (!validTail(t)) {
      this.metrics.sessionTails.inc({ outcome: 'invalid' });
      return;
    }
    const applied = this.sessions.extend({
      tenant: t.tenant,
      sessionId: t.sessionId,
      nodeId,
      model: t.model,
      chunkKeys: t.chunkKeys,
      tokens: t.tokens,
      ...(t.partialKey ? { partialKey: t.partialKey } : {}),
    });
    this.metrics.sessionTails.inc({ outcome: applied ? 'applied' : 'stale' });
  }

  /** A node joined the registry: whatever it holds from before we met it is unknown to us. */
  nodeJoined(nodeId: string): void {
    this.askReport(nodeId, 'joined');
  }

  nodeLeft(nodeId: string): void {
    this.directory.dropNode(nodeId);
    this.expected?.dropNode(nodeId);
    this.lastSeq.delete(nodeId);
    this.awaitingReport.delete(nodeId);
  }

  private askReport(nodeId: string, reason: 'unknown' | 'gap' | 'joined' | 'retry'): void {
    const now = this.clock.monotonicMs();
    const asked = this.awaitingReport.get(nodeId);
    if (asked !== undefined && now - asked < REPORT_RETRY_MS) return;
    this.awaitingReport.set(nodeId, now);
    this.metrics.kvReportsRequested.inc({ reason });
    this.reports.request([nodeId]);
  }
}

function toDirectoryChange(c: KvChange): DirectoryChange[] {
  const kind = KINDS[c.kind];
  const tier = TIERS[c.tier];
  return kind && tier ? [{ kind, tier, keys: c.chunkKeys }] : [];
}

/** Keys a tail may name: a very long conversation's (the node's own prefetch bound). */
const MAX_TAIL_KEYS = 4096;

/**
 * A tail whose keys and token count agree: chunk keys, at most MAX_TAIL_KEYS, tokens within the chunk after them (and past it only with a
 * partial key).
 */
function validTail(t: SessionTail): boolean {
  if (!t.tenant || !t.sessionId || !t.model || t.chunkKeys.length > MAX_TAIL_KEYS) return false;
  if (!t.chunkKeys.every(isChunkKey) || (t.partialKey !== '' && !isChunkKey(t.partialKey))) return false;
  const past = t.tokens - t.chunkKeys.length * CHUNK_TOKENS;
  return past >= 0 && past < CHUNK_TOKENS && (past === 0) === (t.partialKey === '');
}
