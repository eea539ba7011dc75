/** Asks nodes for a full KV report (answered as a KvEvent with full = true on KV_EVENTS). */
export interface KvReportRequester {
  /** Empty: every node. */
  request(nodeIds: readonly string[]): void;
}

export const KV_REPORT_REQUESTER = Symbol('KV_REPORT_REQUESTER');

/** Injection token of the scheduler's KvDirectory (kv-core). */
export const KV_DIRECTORY = Symbol('KV_DIRECTORY');
