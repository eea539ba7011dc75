import type { Context } from '@opentelemetry/api';
import type { InferenceRequest } from '@mnemo/proto';

/** A request dispatched to this node by the scheduler; tokens go to `request.replySubject`. */
export class AdmitInferenceCommand {
  constructor(
    readonly request: InferenceRequest,
    /** The scheduler's dispatch span, from the message headers (root when none came). */
    readonly trace?: Context,
  ) {}
}
