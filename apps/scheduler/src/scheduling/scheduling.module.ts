import { Module } from '@nestjs/common';
import { NodesModule } from '../nodes/nodes.module.js';
import { NatsNodeDispatcher } from './nats-node.dispatcher.js';
import { NODE_DISPATCHER } from './node-dispatcher.port.js';
import { ScheduleInferenceUseCase } from './schedule-inference.use-case.js';
import { ScheduleNatsHandler } from './schedule.nats-handler.js';

/** Routing and dispatch of inference requests. */
@Module({
  imports: [NodesModule],
  providers: [{ provide: NODE_DISPATCHER, useClass: NatsNodeDispatcher }, ScheduleInferenceUseCase, ScheduleNatsHandler],
})
export class SchedulingModule {}
