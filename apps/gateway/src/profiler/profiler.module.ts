import { Module } from '@nestjs/common';
import { ProfilerClient } from './profiler.client.js';
import { ProfilerController } from './profiler.controller.js';

/** DroidSpeak profiling through the gateway: a proxy onto the profiler's REST API. */
@Module({
  controllers: [ProfilerController],
  providers: [ProfilerClient],
})
export class ProfilerModule {}
