import { randomUUID } from 'node:crypto';
import type { NatsConnection } from '@nats-io/transport-node';
import { Subjects } from '@mnemo/proto';
import { NATS_CONNECTION, natsEntryPoints } from '@mnemo/service-kit';
import { WHY_RECORDS } from './why.ports.js';
import type { RoutingRecord, RoutingRecords } from './routing.records.js';

/** Largest record message taken (a record of the longest prompt is far below). */
const MAX_RECORD_BYTES = 4 << 20;

/**
 * Shares routing records between scheduler replicas (WHY_RECORD): each record this replica makes
 * goes to all, and each replica keeps the newest per request (RoutingRecords.adopt). So a WHY,
 * answered by one replica of the queue group, gets the same record from any of them — not the
 * stale first attempt a replica kept after another one re-routed the request on failover.
 * A replica started later knows the records made since it started.
 */
export const WhyRecordShare = natsEntryPoints(
  'WhyRecordShare',
  [NATS_CONNECTION, WHY_RECORDS],
  (nats, nc: NatsConnection, records: RoutingRecords) => {
    const replica = randomUUID();
    records.onRecord = (record) => {
      if (nc.isClosed() || nc.isDraining()) return;
      // Sharing is best effort: a record that does not get out leaves `why` to this replica's copy, never fails the routing.
      try {
        nc.publish(Subjects.WHY_RECORD, JSON.stringify({ from: replica, record }));
      } catch (e) {
        nats.logger.emit('warn', 'routing record not shared', { err: String(e) });
      }
    };
    nats.listen(Subjects.WHY_RECORD, (msg) => {
      if (msg.data.length > MAX_RECORD_BYTES) return;
      try {
        const m = JSON.parse(new TextDecoder().decode(msg.data)) as { from?: unknown; record?: unknown };
        if (m.from === replica) return;
        const r = checked(m.record);
        if (r) records.adopt(r);
        else nats.logger.emit('warn', 'malformed routing record ignored', { from: String(m.from) });
      } catch (e) {
        nats.logger.emit('warn', 'malformed routing record ignored', { err: String(e) });
      }
    });
  },
);

/** The record when it has a record's shape (fields `why` reads), else null. */
function checked(x: unknown): RoutingRecord | null {
  if (x === null || typeof x !== 'object') return null;
  const r = x as Record<string, unknown>;
  const str = (k: string) => typeof r[k] === 'string';
  const int = (k: string) => Number.isSafeInteger(r[k]) && (r[k] as number) >= 0;
  if (!str('requestId') || !str('tenant') || !str('model') || !str('nodeId')) return null;
  if (!int('attempt') || !int('promptTokens') || !int('atUnixMs')) return null;
  if (!Array.isArray(r.chunkKeys) || !r.chunkKeys.every((k) => typeof k === 'string')) return null;
  if (!Array.isArray(r.chunks) || r.chunks.length !== r.chunkKeys.length) return null;
  for (const c of r.chunks as unknown[]) {
    const o = c as Record<string, unknown> | null;
    if (!o || !Array.isArray(o.heldBy) || !Array.isArray(o.otherModels) || typeof o.otherTenantHeld !== 'boolean') return null;
  }
  if (r.route !== undefined && !routeShaped(r.route)) return null;
  return r as unknown as RoutingRecord;
}

/** A record's route: a reason, an estimate and candidates with numeric estimates. */
function routeShaped(x: unknown): boolean {
  const r = x as Record<string, unknown> | null;
  if (!r || typeof r !== 'object' || typeof r.reason !== 'string' || typeof r.estimateMs !== 'number') return false;
  if (!Array.isArray(r.candidates)) return false;
  return (r.candidates as unknown[]).every((c) => {
    const o = c as Record<string, unknown> | null;
    return !!o && typeof o.nodeId === 'string' && ['queueMs', 'kvMs', 'totalMs'].every((k) => typeof o[k] === 'number');
  });
}
