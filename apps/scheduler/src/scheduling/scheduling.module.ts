import { Module } from '@nestjs/common';
import { KvDirectoryModule } from '../kv-directory/kv-directory.module.js';
import { NodesModule } from '../nodes/nodes.module.js';
import { SessionsModule } from '../sessions/sessions.module.js';
import { NatsNodeDispatcher } from './nats-node.dispatcher.js';
import { NODE_DISPATCHER } from './node-dispatcher.port.js';
import { RoutePlanner } from './route.planner.js';
import { ScheduleInferenceUseCase } from './schedule-inference.use-case.js';
import { ScheduleNatsHandler } from './schedule.nats-handler.js';

/** Routing and dispatch of inference requests. */
@Module({
  imports: [NodesModule, KvDirectoryModule, SessionsModule],
  providers: [{ provide: NODE_DISPATCHER, useClass: NatsNodeDispatcher }, RoutePlanner, ScheduleInferenceUseCase, ScheduleNatsHandler],
})
export class SchedulingModule {}
