import { Module } from '@nestjs/common';
import { ProfilingModule } from '../profiling/profiling.module.js';
import { ChoosePlanUseCase } from './choose-plan.use-case.js';
import { PlansNatsHandler } from './plans.nats-handler.js';

@Module({ imports: [ProfilingModule], providers: [ChoosePlanUseCase, PlansNatsHandler] })
export class PlansModule {}
