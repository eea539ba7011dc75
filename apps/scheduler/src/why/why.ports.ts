import type { NodeKvRecord } from '@mnemo/proto';

/** Asks the node that ran a request for its record; null when it does not answer in time. */
export interface NodeWhyClient {
  ask(nodeId: string, requestId: string, chunkKeys: readonly string[]): Promise<NodeKvRecord | null>;
}

export const NODE_WHY_CLIENT = Symbol('NODE_WHY_CLIENT');
/** Injection token of the scheduler's RoutingRecords. */
export const WHY_RECORDS = Symbol('WHY_RECORDS');
