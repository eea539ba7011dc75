import { Module } from '@nestjs/common';
import { CLOCK, type Clock } from '@mnemo/service-kit';
import { SCHEDULER_CONFIG, type SchedulerConfig } from '../config/scheduler.config.js';
import { KvDirectoryModule } from '../kv-directory/kv-directory.module.js';
import { NodesModule } from '../nodes/nodes.module.js';
import { ClusterStatusNatsHandler } from './cluster-status.nats-handler.js';
import { ClusterStatusUseCase } from './cluster-status.use-case.js';
import { NatsNodeWhyClient } from './nats-node-why.client.js';
import { RoutingRecords } from './routing.records.js';
import { WhyRecordShare } from './why-record.share.js';
import { WhyNatsHandler } from './why.nats-handler.js';
import { NODE_WHY_CLIENT, WHY_RECORDS } from './why.ports.js';
import { WhyUseCase } from './why.use-case.js';

const records = {
  provide: WHY_RECORDS,
  inject: [SCHEDULER_CONFIG, CLOCK],
  useFactory: (c: SchedulerConfig, clock: Clock) =>
    new RoutingRecords(c.SCHEDULER_WHY_RECORDS!, c.SCHEDULER_WHY_TTL_MS!, c.SCHEDULER_WHY_CONTENT_KEYS!, () => clock.unixMs()),
};

/** `why`: routing records, the content index, and the WHY answer that combines them with the node's record. */
@Module({
  imports: [NodesModule, KvDirectoryModule],
  providers: [
    ClusterStatusUseCase,
    ClusterStatusNatsHandler,
    records,
    { provide: NODE_WHY_CLIENT, useClass: NatsNodeWhyClient },
    WhyUseCase,
    WhyNatsHandler,
    WhyRecordShare,
  ],
  exports: [WHY_RECORDS],
})
export class WhyModule {}
