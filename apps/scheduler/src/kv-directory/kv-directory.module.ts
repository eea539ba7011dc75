import { Module } from '@nestjs/common';
import { KvDirectory } from '@mnemo/kv-core';
import { SCHEDULER_CONFIG, type SchedulerConfig } from '../config/scheduler.config.js';
import { NodesModule } from '../nodes/nodes.module.js';
import { SessionsModule } from '../sessions/sessions.module.js';
import { SchedulerMetrics } from '../shared/scheduler.metrics.js';
import { KvEventsNatsHandler } from './kv-events.nats-handler.js';
import { KV_DIRECTORY, KV_REPORT_REQUESTER } from './kv-report.port.js';
import { NatsKvReportRequester } from './nats-kv-report.requester.js';
import { RecordKvEventUseCase } from './record-kv-event.use-case.js';

const directory = {
  provide: KV_DIRECTORY,
  inject: [SCHEDULER_CONFIG, SchedulerMetrics],
  useFactory: (config: SchedulerConfig, metrics: SchedulerMetrics) => {
    const d = new KvDirectory(config.SCHEDULER_KV_DIRECTORY_MAX_HOLDINGS!);
    metrics.observeDirectory(() => d.stats());
    return d;
  },
};

/** The KV directory: chunk key → nodes and tiers, from the nodes' KV events and reports. */
@Module({
  imports: [NodesModule, SessionsModule],
  providers: [directory, { provide: KV_REPORT_REQUESTER, useClass: NatsKvReportRequester }, RecordKvEventUseCase, KvEventsNatsHandler],
  exports: [KV_DIRECTORY],
})
export class KvDirectoryModule {}
