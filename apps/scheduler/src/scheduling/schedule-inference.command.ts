import type { Context } from '@opentelemetry/api';
import type { InferenceRequest } from '@mnemo/proto';

/** Schedule one inference; the request travels on to the node unchanged. */
export class ScheduleInferenceCommand {
  constructor(
    readonly request: InferenceRequest,
    /** The caller's trace context, from the message headers (root when none came). */
    readonly trace?: Context,
  ) {}
}
