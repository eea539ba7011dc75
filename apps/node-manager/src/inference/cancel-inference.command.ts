/** The gateway's client went away (or gave up): stop the request. */
export class CancelInferenceCommand {
  constructor(
    readonly requestId: string,
    readonly reason: string,
  ) {}
}
