import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';

/** Whether the node takes new work; false from the start of shutdown (heartbeats say so too). */
@Injectable()
export class NodeLifecycle {
  accepting = true;
  /**
   * Drawn once per process: heartbeats and admissions carry it, so the scheduler and gateways
   * tell a restarted node (its requests gone) from the one they knew under the same NODE_ID.
   */
  readonly bootId = randomUUID();
}
