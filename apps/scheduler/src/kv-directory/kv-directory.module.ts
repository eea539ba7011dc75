import { Module } from '@nestjs/common';
import { ExpectedHoldings, KvDirectory } from '@mnemo/kv-core';
import { CLOCK, type Clock } from '@mnemo/service-kit';
import { SCHEDULER_CONFIG, type SchedulerConfig } from '../config/scheduler.config.js';
import { NodesModule } from '../nodes/nodes.module.js';
import { SessionsModule } from '../sessions/sessions.module.js';
import { SchedulerMetrics } from '../shared/scheduler.metrics.js';
import { KvEventsNatsHandler } from './kv-events.nats-handler.js';
import { EXPECTED_HOLDINGS, KV_DIRECTORY, KV_REPORT_REQUESTER } from './kv-report.port.js';
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

const expected = {
  provide: EXPECTED_HOLDINGS,
  inject: [SCHEDULER_CONFIG, SchedulerMetrics, CLOCK],
  useFactory: (config: SchedulerConfig, metrics: SchedulerMetrics, clock: Clock) => {
    if (config.SCHEDULER_EXPECTED_HOLDINGS_MAX === 0) return null;
    const e = new ExpectedHoldings(config.SCHEDULER_EXPECTED_HOLDINGS_MAX!, config.SCHEDULER_EXPECTED_HOLDINGS_TTL_MS!);
    metrics.observeExpected(() => e.stats(clock.unixMs()));
    return e;
  },
};

/**
 * The KV directory: chunk key → nodes and tiers, from the nodes' KV events and reports; and
 * the expected holdings: what was just routed where, until those events confirm it.
 */
@Module({
  imports: [NodesModule, SessionsModule],
  providers: [
    directory,
    expected,
    { provide: KV_REPORT_REQUESTER, useClass: NatsKvReportRequester },
    RecordKvEventUseCase,
    KvEventsNatsHandler,
  ],
  exports: [KV_DIRECTORY, EXPECTED_HOLDINGS],
})
export class KvDirectoryModule {}
