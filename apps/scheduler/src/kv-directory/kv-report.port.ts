/** Asks nodes for a full KV report (answered as a KvEvent with full = true on KV_EVENTS). */
export interface KvReportRequester {
  /** Empty: every node. */
  request(nodeIds: readonly string[]): void;
}

export const KV_REPORT_REQUESTER = Symbol('KV_REPORT_REQUESTER');

/** Injection token of the scheduler's KvDirectory (kv-core). */
export const KV_DIRECTORY = Symbol('KV_DIRECTORY');

/** Injection token of the scheduler's ExpectedHoldings (kv-core), or null when SCHEDULER_EXPECTED_HOLDINGS_MAX is 0. */
export const EXPECTED_HOLDINGS = Symbol('EXPECTED_HOLDINGS');
