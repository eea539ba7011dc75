import { Injectable } from '@nestjs/common';

/** Whether the node takes new work; false from the start of shutdown (heartbeats say so too). */
@Injectable()
export class NodeLifecycle {
  accepting = true;
}
