import type { KvEvent } from '@mnemo/proto';

/** A KvEvent as received from a node (a diff, or a full report when `full`). */
export class RecordKvEventCommand {
  constructor(readonly event: KvEvent) {}
}
