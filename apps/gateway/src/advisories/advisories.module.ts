import { Module } from '@nestjs/common';
import { SessionsController } from '../sessions/sessions.controller.js';
import { SessionUseCase } from '../sessions/session.use-case.js';
import { AdviseUseCase } from './advise.use-case.js';
import { AdvisoriesController } from './advisories.controller.js';
import { AdvisoriesGrpcController } from './advisories.grpc.controller.js';

/** Advisories and sessions: REST and gRPC doors onto the scheduler's ADVISE / INVALIDATE / SESSION_* subjects. */
@Module({
  controllers: [AdvisoriesController, SessionsController],
  providers: [AdviseUseCase, SessionUseCase, AdvisoriesGrpcController],
  exports: [AdvisoriesGrpcController],
})
export class AdvisoriesModule {}
