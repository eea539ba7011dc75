import { Module } from '@nestjs/common';
import { KvDirectoryModule } from '../kv-directory/kv-directory.module.js';
import { NodesModule } from '../nodes/nodes.module.js';
import { SchedulingModule } from '../scheduling/scheduling.module.js';
import { SessionsModule } from '../sessions/sessions.module.js';
import { AdviseUseCase } from './advise.use-case.js';
import { AdvisoriesNatsHandler } from './advisories.nats-handler.js';
import { InvalidateAdvisoryUseCase } from './invalidate-advisory.use-case.js';

/** Symphony advisories: reservations with a TTL and prefetch requests to the reserved node. */
@Module({
  imports: [NodesModule, KvDirectoryModule, SessionsModule, SchedulingModule],
  providers: [AdviseUseCase, InvalidateAdvisoryUseCase, AdvisoriesNatsHandler],
})
export class AdvisoriesModule {}
