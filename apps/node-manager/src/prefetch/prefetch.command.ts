import type { ForgetRequest, PrefetchRequest } from '@mnemo/proto';

/** An advisory: a request for this session is expected here; pull its KV in ahead of it. */
export class PrefetchCommand {
  constructor(readonly request: PrefetchRequest) {}
}

/** The advisory (or every advisory of the session) is withdrawn. */
export class ForgetPrefetchCommand {
  constructor(readonly request: ForgetRequest) {}
}
