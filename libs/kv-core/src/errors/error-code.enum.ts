/** Every code a Mnemo service may return; the wire value is the string. */
export enum ErrorCode {
  InvalidRequest = 'invalid_request',
  Unauthenticated = 'unauthenticated',
  PermissionDenied = 'permission_denied',
  ModelNotFound = 'model_not_found',
  NotFound = 'not_found',
  PromptTooLong = 'prompt_too_long',
  Conflict = 'conflict',
  NoNodeAvailable = 'no_node_available',
  /** A dependency the service needs is down (the profiler's database): retry once it is back. */
  Unavailable = 'unavailable',
  Overloaded = 'overloaded',
  Timeout = 'timeout',
  Cancelled = 'cancelled',
  Internal = 'internal',
  /** Stored KV failed its checksum or could not be read: a miss to recompute, never wrong tokens. */
  DataLoss = 'data_loss',
}
