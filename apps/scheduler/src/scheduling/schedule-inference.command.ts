import type { InferenceRequest } from '@mnemo/proto';

/** Schedule one inference; the request travels on to the node unchanged. */
export class ScheduleInferenceCommand {
  constructor(readonly request: InferenceRequest) {}
}
