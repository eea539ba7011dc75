import { Module } from '@nestjs/common';
import { SCHEDULER_CONFIG, type SchedulerConfig } from '../config/scheduler.config.js';
import { DERIVED_PAIRS, DerivedPairsRegistry, parseDerivedBases } from '../droidspeak/derived-pairs.registry.js';
import { FrontierUpdatesNatsHandler } from '../droidspeak/frontier-updates.nats-handler.js';
import { KvDirectoryModule } from '../kv-directory/kv-directory.module.js';
import { NodesModule } from '../nodes/nodes.module.js';
import { SessionsModule } from '../sessions/sessions.module.js';
import { NatsNodeDispatcher } from './nats-node.dispatcher.js';
import { NODE_DISPATCHER } from './node-dispatcher.port.js';
import { RoutePlanner } from './route.planner.js';
import { ScheduleInferenceUseCase } from './schedule-inference.use-case.js';
import { ScheduleNatsHandler } from './schedule.nats-handler.js';
import { WhyModule } from '../why/why.module.js';

/** Routing and dispatch of inference requests. */
@Module({
  imports: [NodesModule, KvDirectoryModule, SessionsModule, WhyModule],
  providers: [
    { provide: NODE_DISPATCHER, useClass: NatsNodeDispatcher },
    {
      provide: DERIVED_PAIRS,
      inject: [SCHEDULER_CONFIG],
      useFactory: (c: SchedulerConfig) => new DerivedPairsRegistry(parseDerivedBases(c.SCHEDULER_DROIDSPEAK_BASES ?? []).bases),
    },
    FrontierUpdatesNatsHandler,
    RoutePlanner,
    ScheduleInferenceUseCase,
    ScheduleNatsHandler,
  ],
  exports: [RoutePlanner],
})
export class SchedulingModule {}
