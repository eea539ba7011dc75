import { Inject, Injectable } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import { encodeMessage, KvReportRequestSchema, Subjects } from '@mnemo/proto';
import { NATS_CONNECTION } from '@mnemo/service-kit';
import type { KvReportRequester } from './kv-report.port.js';

/** Publishes KV_REPORT; fire-and-forget, the reports come back as KV events. */
@Injectable()
export class NatsKvReportRequester implements KvReportRequester {
  constructor(@Inject(NATS_CONNECTION) private readonly nc: NatsConnection) {}

  request(nodeIds: readonly string[]): void {
    if (this.nc.isClosed()) return;
    this.nc.publish(Subjects.KV_REPORT, encodeMessage(KvReportRequestSchema, { nodeIds: [...nodeIds] }));
  }
}
