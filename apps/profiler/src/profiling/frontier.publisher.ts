import { Inject, Injectable } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import type { ProfiledPattern } from '@mnemo/kv-core';
import { encodeMessage, FrontierUpdatedSchema, Subjects } from '@mnemo/proto';
import { NATS_CONNECTION } from '@mnemo/service-kit';
import { toFrontierPoint } from './frontier-point.mapper.js';

/** Tells every node's plan cache that a pair has a new frontier (PROFILER_FRONTIER_UPDATED). */
@Injectable()
export class FrontierPublisher {
  constructor(@Inject(NATS_CONNECTION) private readonly nats: NatsConnection) {}

  publish(base: string, derived: string, jobId: string, frontier: readonly ProfiledPattern[]): void {
    this.nats.publish(
      Subjects.PROFILER_FRONTIER_UPDATED,
      encodeMessage(FrontierUpdatedSchema, { base, derived, jobId, frontier: frontier.map(toFrontierPoint) }),
    );
  }
}
