import type { Heartbeat } from '@mnemo/proto';

/** A heartbeat as received; the node's own clock (sent_unix_ms) is informational only. */
export class RecordHeartbeatCommand {
  constructor(readonly heartbeat: Heartbeat) {}
}
